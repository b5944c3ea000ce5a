#!/usr/bin/env python3
"""Generates kraftd's bounded Rust codecs from Kafka's JSON message schemas.

The schemas ship as resources inside the pinned Kafka jars (kafka-clients: common/message,
kafka-metadata: common/metadata, kafka-raft: QuorumStateData). They are read from the jars at
generation time and never committed; the generated Rust is committed. A new Kafka release is a
re-run: `make codegen` (see codegen/README.md).

Usage: generate.py --jar JAR [--jar JAR ...] --messages codegen/messages.txt --out src/protocol/messages
"""

import argparse
import json
import os
import shutil
import re
import sys
import zipfile

RUST_KEYWORDS = {
    "as", "break", "const", "continue", "crate", "else", "enum", "extern", "false", "fn", "for",
    "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return",
    "self", "static", "struct", "super", "trait", "true", "type", "unsafe", "use", "where",
    "while", "async", "await", "dyn", "abstract", "become", "box", "do", "final", "macro",
    "override", "priv", "typeof", "unsized", "virtual", "yield", "try",
}
PRIMITIVES = {"bool", "int8", "int16", "uint16", "int32", "uint32", "int64", "float64",
              "string", "bytes", "uuid", "records"}
RUST_PRIM = {"bool": "bool", "int8": "i8", "int16": "i16", "uint16": "u16", "int32": "i32",
             "uint32": "u32", "int64": "i64", "float64": "f64", "string": "String",
             "bytes": "Vec<u8>", "uuid": "Uuid", "records": "Vec<u8>"}
# Names the generated modules must not shadow.
RESERVED_TYPES = {"Option", "Result", "Vec", "String", "Box", "Uuid", "Reader", "Writer",
                  "Message", "RawTaggedField", "DecodeError", "EncodeError", "Value"}
MAX_VERSION = 0x7FFF


class Versions:
    """A Kafka version range: "0+", "1-3", "2", or "none"."""

    def __init__(self, text):
        text = str(text).strip()
        if text == "none":
            self.lo, self.hi = None, None
        elif text.endswith("+"):
            self.lo, self.hi = int(text[:-1]), MAX_VERSION
        elif "-" in text:
            a, b = text.split("-")
            self.lo, self.hi = int(a), int(b)
        else:
            self.lo = self.hi = int(text)

    def empty(self):
        return self.lo is None

    def intersect(self, other):
        if self.empty() or other.empty():
            return Versions("none")
        lo, hi = max(self.lo, other.lo), min(self.hi, other.hi)
        if lo > hi:
            return Versions("none")
        v = Versions("none")
        v.lo, v.hi = lo, hi
        return v

    def cond(self, var="version", within=None):
        """A Rust boolean for `var` in range; `within` is the range the caller already knows."""
        if self.empty():
            return "false"
        lo_known = within is not None and not within.empty() and within.lo >= self.lo
        hi_known = within is not None and not within.empty() and within.hi <= self.hi
        parts = []
        if self.lo > 0 and not lo_known:
            parts.append(f"{var} >= {self.lo}")
        if self.hi < MAX_VERSION and not hi_known:
            parts.append(f"{var} <= {self.hi}")
        return " && ".join(parts) if parts else "true"


def strip_comments(text):
    return "\n".join(l for l in text.splitlines() if not l.strip().startswith("//"))


def snake(name):
    s = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)
    s = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", s)
    s = s.lower()
    return s + "_" if s in RUST_KEYWORDS else s


def camel(name):
    return name[0].lower() + name[1:]


class Field:
    def __init__(self, spec, msg):
        self.name = spec["name"]
        self.rust = snake(self.name)
        self.json = camel(self.name)
        raw_type = spec["type"]
        self.is_array = raw_type.startswith("[]")
        self.elem = raw_type[2:] if self.is_array else raw_type
        self.versions = Versions(spec.get("versions", "0+"))
        self.nullable = Versions(spec.get("nullableVersions", "none"))
        self.tagged = Versions(spec.get("taggedVersions", "none"))
        self.tag = spec.get("tag")
        self.ignorable = bool(spec.get("ignorable", False))
        self.default = spec.get("default")
        # A field may override the message's flexible versions (RequestHeader.ClientId: "none").
        self.flexible = Versions(spec["flexibleVersions"]) if "flexibleVersions" in spec else None
        self.about = spec.get("about", "").strip()
        self.struct = None  # resolved struct for struct-typed fields
        if "fields" in spec:
            if self.elem in PRIMITIVES:
                raise SystemExit(f"{msg}.{self.name}: primitive type with nested fields")
            self.struct = msg.add_struct(self.elem, spec["fields"], spec.get("versions", "0+"))
        if not self.tagged.empty() and self.tag is None:
            raise SystemExit(f"{msg.name}.{self.name}: taggedVersions without tag")

    @property
    def is_struct(self):
        return self.elem not in PRIMITIVES

    def any_nullable(self):
        return not self.nullable.empty()

    def elem_rust(self):
        return RUST_PRIM[self.elem] if self.elem in PRIMITIVES else self.elem

    def rust_type(self):
        t = f"Vec<{self.elem_rust()}>" if self.is_array else self.elem_rust()
        return f"Option<{t}>" if self.any_nullable() else t

    def default_expr(self):
        d = self.default
        nullable = self.any_nullable()
        if self.is_array:
            if d == "null":
                return "None"
            return "Some(Vec::new())" if nullable else "Vec::new()"
        if self.is_struct:
            if d == "null":
                return "None"
            return f"Some({self.elem}::default())" if nullable else f"{self.elem}::default()"
        t = self.elem
        if t == "records":
            if nullable:
                return "None" if d in (None, "null") else "Some(Vec::new())"
            return "Vec::new()"
        if d == "null" or (d is None and nullable and t in ("string", "bytes")):
            if d == "null":
                return "None"
        if t == "bool":
            v = "true" if str(d).lower() == "true" else "false"
        elif t in ("int8", "int16", "uint16", "int32", "uint32", "int64"):
            if d is None or d == "":
                v = "0"
            else:
                s = str(d)
                n = int(s, 16) if s.lower().startswith(("0x", "-0x")) else int(s)
                v = str(n)
            v = f"{v}{RUST_PRIM[t]}" if not v.startswith("-") else f"({v}{RUST_PRIM[t]})"
        elif t == "float64":
            v = f"{float(d) if d not in (None, '') else 0.0!r}f64"
        elif t == "string":
            v = f"String::from({json.dumps(d if d else '')})"
        elif t == "bytes":
            v = "Vec::new()"
        elif t == "uuid":
            v = "Uuid::ZERO" if not d else f"Uuid::parse({json.dumps(d)}).unwrap()"
        else:
            raise SystemExit(f"unknown type {t}")
        return f"Some({v})" if nullable else v


class Struct:
    def __init__(self, name, fields_spec, versions, msg):
        self.name = name
        self.versions = Versions(versions)
        self.fields = [Field(f, msg) for f in fields_spec]
        tags = [f.tag for f in self.fields if f.tag is not None]
        if len(tags) != len(set(tags)):
            raise SystemExit(f"{msg.name}.{name}: duplicate tags")


class Schema:
    def __init__(self, spec):
        self.name = spec["name"]
        self.kind = spec["type"]
        self.api_key = spec.get("apiKey")
        self.valid = Versions(spec["validVersions"])
        self.flexible = Versions(spec.get("flexibleVersions", "none"))
        self.unstable = bool(spec.get("latestVersionUnstable", False))
        self.structs = {}
        self.order = []
        self.common = {c["name"]: c for c in spec.get("commonStructs", [])}
        self.root = Struct(self.name, spec["fields"], spec["validVersions"], self)
        for cname, c in self.common.items():
            if cname not in self.structs:
                self.add_struct(cname, c["fields"], c.get("versions", "0+"))
        self.resolve(self.root)

    def add_struct(self, name, fields_spec, versions):
        if name in RESERVED_TYPES:
            raise SystemExit(f"{self.name}: struct name {name} clashes with a Rust type")
        if name in self.structs:
            raise SystemExit(f"{self.name}: duplicate struct {name}")
        s = Struct(name, fields_spec, versions, self)
        self.structs[name] = s
        self.order.append(name)
        return s

    def resolve(self, st):
        for f in st.fields:
            if f.is_struct and f.struct is None:
                if f.elem in self.structs:
                    f.struct = self.structs[f.elem]
                elif f.elem in self.common:
                    c = self.common[f.elem]
                    f.struct = self.add_struct(f.elem, c["fields"], c.get("versions", "0+"))
                else:
                    raise SystemExit(f"{self.name}.{f.name}: unknown type {f.elem}")
            if f.struct is not None and f.struct is not st:
                self.resolve(f.struct)


# ---------------------------------------------------------------------------------------------
# Rust emission


def read_scalar(t, what, compact, nullable):
    """Expression reading one value of primitive type t from `r`. nullable: Option result."""
    if t in ("string",):
        return f"r.nullable_string({compact}, {what})?" if nullable else f"r.string({compact}, {what})?"
    if t in ("bytes", "records"):
        return f"r.nullable_bytes({compact}, {what})?" if nullable else f"r.bytes({compact}, {what})?"
    m = {"bool": "bool", "int8": "i8", "int16": "i16", "uint16": "u16", "int32": "i32",
         "uint32": "u32", "int64": "i64", "float64": "f64", "uuid": "uuid"}[t]
    return f"r.{m}({what})?"


def write_scalar(t, val, what, compact, nullable):
    """Statement writing primitive value `val` (a reference expression or Option<&T>)."""
    if t == "string":
        return (f"w.nullable_string({val}, {compact}, {what})?;" if nullable
                else f"w.string({val}, {compact}, {what})?;")
    if t in ("bytes", "records"):
        return (f"w.nullable_bytes({val}, {compact}, {what})?;" if nullable
                else f"w.bytes({val}, {compact}, {what})?;")
    m = {"bool": "bool", "int8": "i8", "int16": "i16", "uint16": "u16", "int32": "i32",
         "uint32": "u32", "int64": "i64", "float64": "f64", "uuid": "uuid"}[t]
    if t == "uuid":
        return f"w.uuid({val});"
    return f"w.{m}(*{val});"


class Emitter:
    def __init__(self, schema):
        self.s = schema
        self.out = []

    def line(self, text=""):
        self.out.append(text)

    def flex_cond(self):
        return self.s.flexible.cond()

    # -- reading ------------------------------------------------------------------------------

    def read_expr(self, f, compact):
        """A Rust expression reading field f (of type f.rust_type()) from `r` at `version`."""
        what = json.dumps(f.name)
        null_ok = f.nullable.cond()
        if f.is_array:
            elem_what = json.dumps(f.name)
            elem = (f"{f.elem}::decode(r, version)" if f.is_struct
                    else read_scalar(f.elem, elem_what, compact, False)[:-1])
            arr = f"r.array({compact}, {what}, {self.min_size(f)}, |r| {elem})?"
            if not f.any_nullable():
                return f"required({arr}, {what})?"
            return arr if null_ok == "true" else f"null_if({null_ok}, {arr}, {what})?"
        if f.is_struct:
            if f.any_nullable():
                return f"r.nullable_struct({null_ok}, {what}, |r| {f.elem}::decode(r, version))?"
            return f"{f.elem}::decode(r, version)?"
        if f.elem in ("string", "bytes", "records") and f.any_nullable():
            read = read_scalar(f.elem, what, compact, True)
            return read if null_ok == "true" else f"null_if({null_ok}, {read}, {what})?"
        value = read_scalar(f.elem, what, compact, False)
        return f"Some({value})" if f.any_nullable() else value

    def min_size(self, f):
        """The fewest bytes one array element of f can take on the wire, at any version."""
        fixed = {"bool": 1, "int8": 1, "int16": 2, "uint16": 2, "int32": 4, "uint32": 4,
                 "int64": 8, "float64": 8, "uuid": 16, "string": 1, "bytes": 1, "records": 1}
        if not f.is_struct:
            return fixed[f.elem]
        # A struct: its fields valid in every version would add up; stay conservative and count
        # only fields present in all versions of the schema, and a tag buffer byte if always flexible.
        total = 0
        for g in f.struct.fields:
            if g.versions.empty() or not g.tagged.empty():
                continue
            if g.versions.lo <= self.s.valid.lo and g.versions.hi >= self.s.valid.hi:
                # Arrays take at least a 1-byte compact length; a nested struct may be empty.
                total += 1 if g.is_array else (0 if g.is_struct else fixed[g.elem])
        return total

    def write_stmt(self, f, compact, src):
        """One Rust statement writing field value `src` (a place of type f.rust_type())."""
        what = json.dumps(f.name)
        null_ok = f.nullable.cond() if f.any_nullable() else "false"
        if f.is_array:
            items = f"{src}.as_deref()" if f.any_nullable() else f"Some(&{src}[..])"
            elem_what = json.dumps(f.name)
            if f.is_struct:
                elem = "x.encode(w, version)"
            elif f.elem in ("string",):
                elem = f"w.string(x, {compact}, {elem_what})"
            elif f.elem in ("bytes", "records"):
                elem = f"w.bytes(x, {compact}, {elem_what})"
            else:
                elem = "{ " + write_scalar(f.elem, "x", elem_what, compact, False) + " Ok(()) }"
            return f"w.array({items}, {null_ok}, {compact}, {what}, version, |w, x| {elem})?;"
        if f.is_struct:
            if f.any_nullable():
                return (f"w.nullable_struct({src}.as_ref(), {null_ok}, {what}, version, "
                        f"|w, x| x.encode(w, version))?;")
            return f"{src}.encode(w, version)?;"
        t = f.elem
        if t == "string":
            if f.any_nullable():
                return f"w.opt_string({src}.as_deref(), {null_ok}, {compact}, {what}, version)?;"
            return f"w.string(&{src}, {compact}, {what})?;"
        if t in ("bytes", "records"):
            if f.any_nullable():
                return f"w.opt_bytes({src}.as_deref(), {null_ok}, {compact}, {what}, version)?;"
            return f"w.bytes(&{src}, {compact}, {what})?;"
        if f.any_nullable():
            return f"if let Some(v) = {src}.as_ref() {{ {write_scalar(t, 'v', what, compact, False)} }}"
        return write_scalar(t, f"(&{src})", what, compact, False)

    # -- json (mirrors Kafka's generated JsonConverter.write) -----------------------------------

    def json_value(self, f, src):
        """Expression producing a serde_json::Value from `src` (&f.rust_type())."""
        def scalar(t, v):
            if t == "uuid":
                return f"Value::from({v}.to_string())"
            if t in ("bytes", "records"):
                return f"Value::from(base64_encode({v}))"
            if t == "float64":
                return f"Value::from(*{v})"
            if t == "string":
                return f"Value::from({v}.as_str())"
            return f"Value::from(*{v})"

        def elem(v):
            return f"{v}.to_kafka_json(version)" if f.is_struct else scalar(f.elem, v)

        if f.is_array:
            arr = "Value::Array(items.iter().map(|x| " + elem("x") + ").collect())"
            if f.any_nullable():
                return f"match {src} {{ None => Value::Null, Some(items) => {arr} }}"
            return f"{{ let items = {src}; {arr} }}"
        if f.is_struct:
            if f.any_nullable():
                return f"match {src} {{ None => Value::Null, Some(x) => x.to_kafka_json(version) }}"
            return f"{src}.to_kafka_json(version)"
        if f.elem == "records":
            raise AssertionError("records fields are rendered by json_records")
        if f.any_nullable():
            return f"match {src} {{ None => Value::Null, Some(x) => {scalar(f.elem, 'x')} }}"
        return scalar(f.elem, src)

    # -- struct -------------------------------------------------------------------------------

    def emit_struct(self, st, is_root):
        s = self.s
        self.cur = st.name
        valid = s.valid.intersect(st.versions) if not is_root else s.valid
        if is_root:
            self.line(f"/// Kafka's `{s.name}` ({s.kind}" + (f", api key {s.api_key}" if s.api_key is not None else "")
                      + f"), versions {s.valid.lo}-{s.valid.hi}" + (" (latest unstable)" if s.unstable else "") + ".")
        self.line("#[derive(Debug, Clone, PartialEq)]")
        self.line(f"pub struct {st.name} {{")
        for f in st.fields:
            if f.about:
                for chunk in wrap(f.about, 92):
                    self.line(f"    /// {chunk}")
            vs = f"versions {f.versions.lo}+" if f.versions.hi == MAX_VERSION else (
                "no versions" if f.versions.empty() else f"versions {f.versions.lo}-{f.versions.hi}")
            extra = ""
            if not f.tagged.empty():
                extra += f", tag {f.tag}"
            if f.any_nullable():
                extra += f", nullable {f.nullable.lo}+"
            self.line(f"    /// ({vs}{extra})")
            self.line(f"    pub {f.rust}: {f.rust_type()},")
        self.line("    /// Tagged fields this build does not know, kept for byte-identical re-encoding.")
        self.line("    pub unknown_tagged_fields: Vec<RawTaggedField>,")
        self.line("}")
        self.line()
        self.line(f"impl Default for {st.name} {{")
        self.line("    fn default() -> Self {")
        self.line("        Self {")
        for f in st.fields:
            self.line(f"            {f.rust}: {f.default_expr()},")
        self.line("            unknown_tagged_fields: Vec::new(),")
        self.line("        }")
        self.line("    }")
        self.line("}")
        self.line()
        self.emit_codec(st, is_root)

    def emit_codec(self, st, is_root):
        s = self.s
        flex = self.flex_cond()
        what_struct = json.dumps(st.name)
        if is_root:
            self.line(f"impl Message for {st.name} {{")
            self.line(f"    const NAME: &'static str = {json.dumps(s.name)};")
            self.line(f"    const LOWEST_VERSION: i16 = {s.valid.lo};")
            self.line(f"    const HIGHEST_VERSION: i16 = {s.valid.hi};")
            self.line()
            self.line("    fn decode(r: &mut Reader<'_>, version: i16) -> Result<Self, DecodeError> {")
            self.line("        if !(Self::LOWEST_VERSION..=Self::HIGHEST_VERSION).contains(&version) {")
            self.line(f"            return Err(DecodeError::UnsupportedVersion {{ what: {what_struct}, version }});")
            self.line("        }")
            self.line("        Self::decode_body(r, version)")
            self.line("    }")
            self.line()
            self.line("    fn encode(&self, w: &mut Writer, version: i16) -> Result<(), EncodeError> {")
            self.line("        if !(Self::LOWEST_VERSION..=Self::HIGHEST_VERSION).contains(&version) {")
            self.line(f"            return Err(EncodeError::UnsupportedVersion {{ what: {what_struct}, version }});")
            self.line("        }")
            self.line("        self.encode_body(w, version)")
            self.line("    }")
            self.line("}")
            self.line()
            if s.api_key is not None and s.kind in ("request", "response"):
                self.line(f"impl ApiMessage for {st.name} {{")
                self.line(f"    const API_KEY: i16 = {s.api_key};")
                self.line("}")
                self.line()
        self.line(f"impl {st.name} {{")
        # decode
        self.line("    #[allow(unused_variables, unused_mut, clippy::needless_late_init)]")
        self.line(f"    {'pub(crate) ' if not is_root else ''}fn decode{'_body' if is_root else ''}(r: &mut Reader<'_>, version: i16) -> Result<Self, DecodeError> {{")
        if not is_root and not st.versions.empty():
            cond = st.versions.cond()
            if cond != "true":
                self.line(f"        if !({cond}) {{")
                self.line(f"            return Err(DecodeError::UnsupportedVersion {{ what: {what_struct}, version }});")
                self.line("        }")
        self.line(f"        let flexible = {flex};")
        self.line("        let mut this = Self::default();")
        for f in st.fields:
            if f.versions.empty():
                continue
            cond = both(f.versions.cond(), f.tagged.cond(), f)
            if cond == "false":
                continue
            expr = self.read_expr(f, compact_expr(f))
            if cond == "true":
                self.line(f"        this.{f.rust} = {expr};")
            else:
                self.line(f"        if {cond} {{")
                self.line(f"            this.{f.rust} = {expr};")
                self.line("        }")
        self.line("        if flexible {")
        tagged_fields = [f for f in st.fields if not f.tagged.empty()]
        if tagged_fields:
            self.line(f"            this.unknown_tagged_fields = r.tagged_fields({what_struct}, |tag, r| {{")
            self.line("                match tag {")
            for f in sorted(tagged_fields, key=lambda f: f.tag):
                guard = f.tagged.intersect(f.versions).cond()
                self.line(f"                    {f.tag}{'' if guard == 'true' else ' if ' + guard} => {{")
                self.line(f"                        this.{f.rust} = {self.read_expr(f, 'true')};")
                self.line("                        Ok(true)")
                self.line("                    }")
            self.line("                    _ => Ok(false),")
            self.line("                }")
            self.line("            })?;")
        else:
            self.line(f"            this.unknown_tagged_fields = r.tagged_fields({what_struct}, |_, _| Ok(false))?;")
        self.line("        }")
        self.line("        Ok(this)")
        self.line("    }")
        self.line()
        # encode
        self.line("    #[allow(unused_variables)]")
        self.line(f"    {'pub(crate) ' if not is_root else ''}fn encode{'_body' if is_root else ''}(&self, w: &mut Writer, version: i16) -> Result<(), EncodeError> {{")
        self.line(f"        let flexible = {flex};")
        self.line("        let defaults = Self::default();")
        for f in st.fields:
            what = json.dumps(f.name)
            in_v, tagged = f.versions.cond(), f.tagged.cond()
            check = f"check_default(self.{f.rust} == defaults.{f.rust}, {what}, version)?;"
            if f.versions.empty():
                if not f.ignorable:
                    self.line(f"        {check}")
                continue
            cond = both(in_v, tagged, f)
            if cond == "false":
                # Always tagged where it exists; elsewhere it must keep its default.
                if not f.ignorable and in_v != "true":
                    self.line(f"        if !({in_v}) {{")
                    self.line(f"            {check}")
                    self.line("        }")
                continue
            stmt = self.write_stmt(f, compact_expr(f), f"self.{f.rust}")
            if cond == "true":
                self.line(f"        {stmt}")
                continue
            self.line(f"        if {cond} {{")
            self.line(f"            {stmt}")
            if f.ignorable:
                # Ignorable: silently dropped at versions that cannot carry it.
                self.line("        }")
            else:
                # A field present at this version but tagged is written in the tag section below.
                self.line("        } else {" if tagged == "false" else f"        }} else if !({in_v}) {{")
                self.line(f"            {check}")
                self.line("        }")
        self.line("        if flexible {")
        self.line("            #[allow(unused_mut)]")
        self.line("            let mut tagged: Vec<(u32, Vec<u8>)> = Vec::new();")
        for f in sorted(tagged_fields, key=lambda f: f.tag):
            self.line(f"            if {f.tagged.intersect(f.versions).cond()} && self.{f.rust} != defaults.{f.rust} {{")
            stmt = self.write_stmt(f, "true", f"self.{f.rust}")
            self.line(f"                tagged.push(({f.tag}, Writer::sub(|w| {{ {stmt} Ok(()) }})?));")
            self.line("            }")
        self.line("            w.tagged_fields(tagged, &self.unknown_tagged_fields);")
        self.line("        } else {")
        self.line("            if !self.unknown_tagged_fields.is_empty() {")
        self.line(f"                return Err(EncodeError::FieldNotInVersion {{ what: \"{st.name} tagged fields\", version }});")
        self.line("            }")
        self.line("        }")
        self.line("        Ok(())")
        self.line("    }")
        self.line()
        # json
        self.line("    /// The same JSON document that Kafka's generated JsonConverter writes for this version.")
        self.line("    #[allow(unused_variables)]")
        self.line("    pub fn to_kafka_json(&self, version: i16) -> Value {")
        self.line("        let mut map = serde_json::Map::new();")
        self.line("        let defaults = Self::default();")
        for f in st.fields:
            if f.versions.empty():
                continue
            cond = f.versions.cond()
            if not f.tagged.empty():
                cond += f" && (!({f.tagged.cond()}) || self.{f.rust} != defaults.{f.rust})"
            self.line(f"        if {cond} {{")
            if f.elem == "records" and not f.is_array:
                # Kafka's converter (not serialising records) writes the size under
                # `<name>SizeInBytes`, and `<name>: null` for a null records field.
                size_key = json.dumps(f.json + "SizeInBytes")
                if f.any_nullable():
                    self.line(f"            match &self.{f.rust} {{")
                    self.line(f"                None => {{ map.insert({json.dumps(f.json)}.into(), Value::Null); }}")
                    self.line(f"                Some(x) => {{ map.insert({size_key}.into(), Value::from(x.len())); }}")
                    self.line("            }")
                else:
                    self.line(f"            map.insert({size_key}.into(), Value::from(self.{f.rust}.len()));")
            else:
                self.line(f"            map.insert({json.dumps(f.json)}.into(), {self.json_value(f, '(&self.' + f.rust + ')')});")
            self.line("        }")
        self.line("        Value::Object(map)")
        self.line("    }")
        self.line("}")
        self.line()

    HEADER_IMPORTS = [
        "#![allow(clippy::all, clippy::pedantic, unused_imports, unused_comparisons, unused_parens, unused_mut)]",
        "",
        "use serde_json::Value;",
        "",
        "use crate::protocol::codec::{check_default, null_if, required, ApiMessage, DecodeError, EncodeError, Message, RawTaggedField, Reader, Uuid, Writer};",
        "use crate::protocol::messages::base64_encode;",
    ]

    def emit_files(self):
        """{relative path: source}. A message with nested structs becomes a directory with one
        file per struct, so no generated file grows past a reviewable size."""
        s = self.s
        mod = snake(s.name)
        files = {}
        self.out = [f"//! Generated by codegen/generate.py from Kafka's `{s.name}.json`. Do not edit.", ""]
        self.out += self.HEADER_IMPORTS
        nested = list(s.order)
        if nested:
            self.line()
            for name in nested:
                self.line(f"mod {snake(name)};")
            for name in nested:
                self.line(f"pub use {snake(name)}::{name};")
        self.line()
        self.emit_struct(s.root, True)
        root = "\n".join(self.out).rstrip() + "\n"
        if not nested:
            return {f"{mod}.rs": root}
        files[f"{mod}/mod.rs"] = root
        for name in nested:
            self.out = [f"//! `{s.name}.{name}`, generated by codegen/generate.py. Do not edit.", ""]
            self.out += self.HEADER_IMPORTS
            self.line("#[allow(unused_imports)]")
            self.line("use super::*;")
            self.line()
            self.emit_struct(s.structs[name], False)
            files[f"{mod}/{snake(name)}.rs"] = "\n".join(self.out).rstrip() + "\n"
        return files


def compact_expr(f):
    """Whether field f uses compact encodings: the message is flexible, unless the field opts out."""
    if f.flexible is None:
        return "flexible"
    return f"flexible && ({f.flexible.cond()})"


def both(in_v, tagged, f=None):
    """Rust condition: the field is present at this version and not in the tagged section."""
    if f is not None and not f.tagged.empty() and not f.versions.empty() \
            and f.tagged.lo <= f.versions.lo and f.tagged.hi >= f.versions.hi:
        return "false"  # tagged in every version it exists in
    if tagged == "false":
        return in_v
    if in_v == "true":
        return f"!({tagged})"
    return f"{in_v} && !({tagged})"


def wrap(text, width):
    words = text.split()
    lines, cur = [], ""
    for w in words:
        if cur and len(cur) + 1 + len(w) > width:
            lines.append(cur)
            cur = w
        else:
            cur = f"{cur} {w}" if cur else w
    if cur:
        lines.append(cur)
    return lines


def load_schemas(jars):
    found = {}
    for jar in jars:
        with zipfile.ZipFile(jar) as z:
            for n in z.namelist():
                if n.endswith(".json") and ("common/message/" in n or "common/metadata/" in n):
                    spec = json.loads(strip_comments(z.read(n).decode("utf-8")))
                    if "name" in spec and "validVersions" in spec:
                        found[spec["name"]] = spec
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--jar", action="append", required=True)
    ap.add_argument("--messages", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--kafka-version", required=True)
    ap.add_argument("--arbitrary-out", help="where the codec oracle's generators go (codegen/arbitrary.py)")
    args = ap.parse_args()
    schemas = load_schemas(args.jar)
    wanted = []
    for line in open(args.messages):
        line = line.split("#")[0].strip()
        if line:
            wanted.append(line)
    missing = [w for w in wanted if w not in schemas]
    if missing:
        sys.exit(f"schemas not found in the jars: {', '.join(missing)}")
    os.makedirs(args.out, exist_ok=True)
    for f in os.listdir(args.out):
        path = os.path.join(args.out, f)
        if f.endswith(".rs"):
            os.remove(path)
        elif os.path.isdir(path):
            shutil.rmtree(path)
    parsed = []
    for name in wanted:
        sch = Schema(schemas[name])
        mod = snake(name)
        for rel, code in Emitter(sch).emit_files().items():
            path = os.path.join(args.out, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as fh:
                fh.write(code)
        parsed.append((mod, sch))
    emit_mod(args.out, parsed, args.kafka_version)
    if args.arbitrary_out:
        sys.dont_write_bytecode = True  # no __pycache__ in codegen/
        from arbitrary import emit_arbitrary
        emit_arbitrary(args.arbitrary_out, parsed)


def emit_mod(out, parsed, kafka_version):
    L = []
    L.append(f"//! Codecs generated by codegen/generate.py from the message schemas of Apache Kafka {kafka_version}.")
    L.append("//! Do not edit: change codegen/messages.txt or the generator, then `make codegen`.")
    L.append("")
    L.append("use crate::protocol::codec::{DecodeError, EncodeError, Message, Reader, RoundTripError, Writer};")
    L.append("")
    L.append(f"/// The Kafka release these codecs were generated from.")
    L.append(f"pub const KAFKA_VERSION: &str = {json.dumps(kafka_version)};")
    L.append("")
    for mod, _ in parsed:
        L.append(f"pub mod {mod};")
    L.append("")
    for mod, sch in parsed:
        L.append(f"pub use {mod}::{sch.name};")
    L.append("")
    L.append("pub(crate) fn base64_encode(bytes: &[u8]) -> String {")
    L.append("    use base64::Engine;")
    L.append("    base64::engine::general_purpose::STANDARD.encode(bytes)")
    L.append("}")
    L.append("")
    L.append("/// What kind of schema a generated message comes from.")
    L.append("#[derive(Debug, Clone, Copy, PartialEq, Eq)]")
    L.append("pub enum SchemaKind { Request, Response, Header, Metadata, Data }")
    L.append("")
    L.append("/// One generated message, for generic tools: golden-vector tests, fuzzing, dump-log.")
    L.append("pub struct SchemaEntry {")
    L.append("    pub name: &'static str,")
    L.append("    pub kind: SchemaKind,")
    L.append("    /// The API key of a request or response, or the record type of a metadata record.")
    L.append("    pub api_key: Option<i16>,")
    L.append("    pub lowest_version: i16,")
    L.append("    pub highest_version: i16,")
    L.append("    /// The first flexible version, if any.")
    L.append("    pub first_flexible_version: Option<i16>,")
    L.append("    /// Whether Kafka marks the highest version unstable (not served by default).")
    L.append("    pub latest_version_unstable: bool,")
    L.append("    /// Decodes exactly the given bytes, then re-encodes at the same version.")
    L.append("    pub round_trip: fn(&[u8], i16) -> Result<Vec<u8>, RoundTripError>,")
    L.append("    /// Encodes the default value at a version (a smoke test of every version's layout).")
    L.append("    pub encode_default: fn(i16) -> Result<Vec<u8>, EncodeError>,")
    L.append("    /// Decodes exactly the given bytes and renders Kafka's JSON form.")
    L.append("    pub to_kafka_json: fn(&[u8], i16) -> Result<serde_json::Value, DecodeError>,")
    L.append("}")
    L.append("")
    L.append("fn round_trip<M: Message>(bytes: &[u8], version: i16) -> Result<Vec<u8>, RoundTripError> {")
    L.append("    let m = M::decode_exact(bytes, version).map_err(RoundTripError::Decode)?;")
    L.append("    let mut w = Writer::new();")
    L.append("    m.encode(&mut w, version).map_err(RoundTripError::Encode)?;")
    L.append("    Ok(w.into_inner())")
    L.append("}")
    L.append("")
    L.append("/// One registry entry: type, kind, api key, versions, first flexible version, unstable.")
    L.append("macro_rules! entry {")
    L.append("    ($ty:ident, $kind:ident, $key:expr, $lo:expr, $hi:expr, $flex:expr, $unstable:expr) => {")
    L.append("        SchemaEntry {")
    L.append("            name: stringify!($ty),")
    L.append("            kind: SchemaKind::$kind,")
    L.append("            api_key: $key,")
    L.append("            lowest_version: $lo,")
    L.append("            highest_version: $hi,")
    L.append("            first_flexible_version: $flex,")
    L.append("            latest_version_unstable: $unstable,")
    L.append("            round_trip: round_trip::<$ty>,")
    L.append("            encode_default: |v| $ty::default().encode_to_vec(v),")
    L.append("            to_kafka_json: |b, v| $ty::decode_exact(b, v).map(|m| m.to_kafka_json(v)),")
    L.append("        }")
    L.append("    };")
    L.append("}")
    L.append("")
    L.append("/// Every generated message, in codegen/messages.txt order.")
    L.append("#[rustfmt::skip]")
    L.append("pub static REGISTRY: &[SchemaEntry] = &[")
    kinds = {"request": "Request", "response": "Response", "header": "Header", "metadata": "Metadata", "data": "Data"}
    for mod, sch in parsed:
        ff = "None" if sch.flexible.empty() else f"Some({sch.flexible.lo})"
        ak = "None" if sch.api_key is None else f"Some({sch.api_key})"
        L.append(f"    entry!({sch.name}, {kinds[sch.kind]}, {ak}, {sch.valid.lo}, {sch.valid.hi}, {ff}, {'true' if sch.unstable else 'false'}),")
    L.append("];")
    L.append("")
    L.append("/// Looks a generated message up by its schema name.")
    L.append("pub fn schema(name: &str) -> Option<&'static SchemaEntry> {")
    L.append("    REGISTRY.iter().find(|e| e.name == name)")
    L.append("}")
    L.append("")
    L.append("#[allow(dead_code)]")
    L.append("fn _assert_reader_used(_: Reader<'_>) {}")
    with open(os.path.join(out, "mod.rs"), "w") as fh:
        fh.write("\n".join(L) + "\n")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Builds the fuzz seed corpora from the golden vectors captured from real Kafka.

message: 2 selector bytes (index into the generated REGISTRY, which follows codegen/messages.txt;
version offset from the schema's lowest version) followed by a vector's bytes.
request_frame: the live request frames captured from Kafka's own tools.
"""
import json, os, re, sys

root = os.path.dirname(os.path.abspath(__file__))
repo = os.path.dirname(root)
names = [l.split("#")[0].strip() for l in open(os.path.join(repo, "codegen/messages.txt"))]
names = [n for n in names if n]
lowest = {}
mod = open(os.path.join(repo, "src/protocol/messages/mod.rs")).read()
for name, lo in re.findall(r'name: "(\w+)",\s*kind: [^,]+,\s*api_key: [^,]+,\s*lowest_version: (\d+)', mod):
    lowest[name] = int(lo)
vec_dir = os.path.join(repo, "protocol-tests/vectors")
out = os.path.join(root, "corpus")
os.makedirs(os.path.join(out, "message"), exist_ok=True)
os.makedirs(os.path.join(out, "request_frame"), exist_ok=True)
count = 0
for name in sorted(os.listdir(vec_dir)):
    d = os.path.join(vec_dir, name)
    if not os.path.isdir(d) or name == "live" or name not in names:
        continue
    for f in os.listdir(d):
        m = re.match(r"v(\d+)(-[\w-]+)?\.bin$", f)
        if not m:
            continue
        sel = bytes([names.index(name) % 256, (int(m.group(1)) - lowest[name]) % 256])
        with open(os.path.join(out, "message", f"{name}-{f}"), "wb") as fh:
            fh.write(sel + open(os.path.join(d, f), "rb").read())
        count += 1
live = os.path.join(vec_dir, "live")
for f in sorted(os.listdir(live)):
    if f.endswith("-request.bin"):
        with open(os.path.join(out, "request_frame", f), "wb") as fh:
            fh.write(open(os.path.join(live, f), "rb").read())
        count += 1
print(f"{count} seeds in {out}")

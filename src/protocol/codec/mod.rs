//! Bounds-checked primitives for Kafka's wire encoding.
//!
//! Every read checks the bytes that remain before it touches or allocates anything, so a count
//! taken from the wire can never size an allocation beyond the input (the class of bug that
//! aborts `kafka-protocol` 0.18 on a 9-byte Vote body). Generated message codecs use only these.

use std::fmt;

mod errors;
mod uuid;

pub use errors::{DecodeError, EncodeError, RoundTripError};
pub use uuid::{Uuid, UuidParseError};

/// A tagged field this build does not know, kept so that re-encoding is byte-identical.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RawTaggedField {
    pub tag: u32,
    pub data: Vec<u8>,
}

/// A cursor over untrusted bytes. Every method checks bounds first.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

type R<T> = Result<T, DecodeError>;

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }

    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    pub fn position(&self) -> usize {
        self.pos
    }

    pub fn rest(&self) -> &'a [u8] {
        &self.buf[self.pos..]
    }

    pub fn take(&mut self, n: usize, what: &'static str) -> R<&'a [u8]> {
        if n > self.remaining() {
            return Err(DecodeError::Truncated {
                what,
                needed: n,
                remaining: self.remaining(),
            });
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    fn fixed<const N: usize>(&mut self, what: &'static str) -> R<[u8; N]> {
        let s = self.take(N, what)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }

    pub fn i8(&mut self, what: &'static str) -> R<i8> {
        Ok(i8::from_be_bytes(self.fixed(what)?))
    }
    pub fn bool(&mut self, what: &'static str) -> R<bool> {
        Ok(self.i8(what)? != 0)
    }
    pub fn i16(&mut self, what: &'static str) -> R<i16> {
        Ok(i16::from_be_bytes(self.fixed(what)?))
    }
    pub fn u16(&mut self, what: &'static str) -> R<u16> {
        Ok(u16::from_be_bytes(self.fixed(what)?))
    }
    pub fn i32(&mut self, what: &'static str) -> R<i32> {
        Ok(i32::from_be_bytes(self.fixed(what)?))
    }
    pub fn u32(&mut self, what: &'static str) -> R<u32> {
        Ok(u32::from_be_bytes(self.fixed(what)?))
    }
    pub fn i64(&mut self, what: &'static str) -> R<i64> {
        Ok(i64::from_be_bytes(self.fixed(what)?))
    }
    pub fn f64(&mut self, what: &'static str) -> R<f64> {
        Ok(f64::from_be_bytes(self.fixed(what)?))
    }
    pub fn uuid(&mut self, what: &'static str) -> R<Uuid> {
        Ok(Uuid(self.fixed(what)?))
    }

    /// Unsigned LEB128 varint of at most 5 bytes (32 bits).
    pub fn unsigned_varint(&mut self, what: &'static str) -> R<u32> {
        let mut value: u32 = 0;
        for i in 0..5 {
            let b = self.fixed::<1>(what)?[0];
            if i == 4 && b > 0x0f {
                return Err(DecodeError::BadVarint { what });
            }
            value |= ((b & 0x7f) as u32) << (7 * i);
            if b & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(DecodeError::BadVarint { what })
    }

    /// Zig-zag signed varint (32 bits), as used inside record batches.
    pub fn varint(&mut self, what: &'static str) -> R<i32> {
        let raw = self.unsigned_varint(what)?;
        Ok(((raw >> 1) as i32) ^ -((raw & 1) as i32))
    }

    /// Zig-zag signed varlong (64 bits), as used inside record batches.
    pub fn varlong(&mut self, what: &'static str) -> R<i64> {
        let mut value: u64 = 0;
        for i in 0..10 {
            let b = self.fixed::<1>(what)?[0];
            if i == 9 && b > 0x01 {
                return Err(DecodeError::BadVarint { what });
            }
            value |= ((b & 0x7f) as u64) << (7 * i);
            if b & 0x80 == 0 {
                return Ok(((value >> 1) as i64) ^ -((value & 1) as i64));
            }
        }
        Err(DecodeError::BadVarint { what })
    }

    /// A length prefix: compact (unsigned varint, length+1, 0 = null) or classic (int16/int32,
    /// -1 = null). Returns None for null. Never trusts the length beyond the bytes present.
    fn length(&mut self, compact: bool, wide: bool, what: &'static str) -> R<Option<usize>> {
        let len: i64 = if compact {
            self.unsigned_varint(what)? as i64 - 1
        } else if wide {
            self.i32(what)? as i64
        } else {
            self.i16(what)? as i64
        };
        if len < -1 {
            return Err(DecodeError::BadLength { what, length: len });
        }
        if len == -1 {
            return Ok(None);
        }
        let len = len as usize;
        if len > self.remaining() {
            return Err(DecodeError::Truncated {
                what,
                needed: len,
                remaining: self.remaining(),
            });
        }
        Ok(Some(len))
    }

    pub fn nullable_string(&mut self, compact: bool, what: &'static str) -> R<Option<String>> {
        match self.length(compact, false, what)? {
            None => Ok(None),
            Some(n) => {
                let bytes = self.take(n, what)?;
                let s = std::str::from_utf8(bytes).map_err(|_| DecodeError::BadUtf8 { what })?;
                Ok(Some(s.to_owned()))
            }
        }
    }

    pub fn string(&mut self, compact: bool, what: &'static str) -> R<String> {
        self.nullable_string(compact, what)?
            .ok_or(DecodeError::UnexpectedNull { what })
    }

    pub fn nullable_bytes(&mut self, compact: bool, what: &'static str) -> R<Option<Vec<u8>>> {
        match self.length(compact, true, what)? {
            None => Ok(None),
            Some(n) => Ok(Some(self.take(n, what)?.to_vec())),
        }
    }

    pub fn bytes(&mut self, compact: bool, what: &'static str) -> R<Vec<u8>> {
        self.nullable_bytes(compact, what)?
            .ok_or(DecodeError::UnexpectedNull { what })
    }

    /// An array element count. Like Kafka, refuses a count larger than the bytes that remain,
    /// so the caller may reserve `count` slots without trusting the wire.
    pub fn array_len(&mut self, compact: bool, what: &'static str) -> R<Option<usize>> {
        let len: i64 = if compact {
            self.unsigned_varint(what)? as i64 - 1
        } else {
            self.i32(what)? as i64
        };
        if len < -1 {
            return Err(DecodeError::BadLength { what, length: len });
        }
        if len == -1 {
            return Ok(None);
        }
        if len as usize > self.remaining() {
            return Err(DecodeError::BadLength { what, length: len });
        }
        Ok(Some(len as usize))
    }

    /// A whole array: its count (refused if `min_element_size` bytes per element cannot fit in
    /// what remains), then each element. None for a null array. The capacity reserved up front
    /// is capped, so a large in-memory element type cannot amplify a count from the wire.
    pub fn array<T>(
        &mut self,
        compact: bool,
        what: &'static str,
        min_element_size: usize,
        mut element: impl FnMut(&mut Reader<'a>) -> R<T>,
    ) -> R<Option<Vec<T>>> {
        let Some(n) = self.array_len(compact, what)? else {
            return Ok(None);
        };
        if min_element_size > 1 && n > self.remaining() / min_element_size {
            return Err(DecodeError::BadLength {
                what,
                length: n as i64,
            });
        }
        let mut items = Vec::with_capacity(n.min(1024));
        for _ in 0..n {
            items.push(element(self)?);
        }
        Ok(Some(items))
    }

    /// A struct that may be null: an int8 marker (negative for null) where `nullable`, else
    /// always present.
    pub fn nullable_struct<T>(
        &mut self,
        nullable: bool,
        what: &'static str,
        decode: impl FnOnce(&mut Reader<'a>) -> R<T>,
    ) -> R<Option<T>> {
        if nullable && self.i8(what)? < 0 {
            return Ok(None);
        }
        decode(self).map(Some)
    }

    /// Reads a tagged-field section, handing each known tag's bytes to `known` and keeping the
    /// rest. Tags must be strictly increasing, as Kafka writes them.
    pub fn tagged_fields(
        &mut self,
        what: &'static str,
        mut known: impl FnMut(u32, &mut Reader<'a>) -> R<bool>,
    ) -> R<Vec<RawTaggedField>> {
        let count = self.unsigned_varint(what)? as usize;
        if count > self.remaining() {
            return Err(DecodeError::BadLength {
                what,
                length: count as i64,
            });
        }
        let mut unknown = Vec::new();
        let mut last: Option<u32> = None;
        for _ in 0..count {
            let tag = self.unsigned_varint(what)?;
            if let Some(prev) = last {
                if tag <= prev {
                    return Err(DecodeError::Invalid(format!(
                        "tagged fields of {what} out of order: tag {tag} after {prev}"
                    )));
                }
            }
            last = Some(tag);
            let size = self.unsigned_varint(what)? as usize;
            let body = self.take(size, what)?;
            let mut sub = Reader::new(body);
            if known(tag, &mut sub)? {
                if sub.remaining() != 0 {
                    return Err(DecodeError::Invalid(format!(
                        "tagged field {tag} of {what} has {} trailing bytes",
                        sub.remaining()
                    )));
                }
            } else {
                unknown.push(RawTaggedField {
                    tag,
                    data: body.to_vec(),
                });
            }
        }
        Ok(unknown)
    }
}

/// A value that must not be null at this version.
pub fn required<T>(value: Option<T>, what: &'static str) -> Result<T, DecodeError> {
    value.ok_or(DecodeError::UnexpectedNull { what })
}

/// A value that may be null only where `null_allowed` (the field's nullable versions).
pub fn null_if<T>(
    null_allowed: bool,
    value: Option<T>,
    what: &'static str,
) -> Result<Option<T>, DecodeError> {
    if value.is_none() && !null_allowed {
        return Err(DecodeError::UnexpectedNull { what });
    }
    Ok(value)
}

/// A field absent at this version must hold its default, unless Kafka marks it ignorable.
pub fn check_default(
    is_default: bool,
    what: &'static str,
    version: i16,
) -> Result<(), EncodeError> {
    if is_default {
        Ok(())
    } else {
        Err(EncodeError::FieldNotInVersion { what, version })
    }
}

/// Appends Kafka wire encodings to a byte vector.
#[derive(Debug, Default)]
pub struct Writer {
    pub buf: Vec<u8>,
}

type W = Result<(), EncodeError>;

impl Writer {
    pub fn new() -> Self {
        Writer { buf: Vec::new() }
    }
    pub fn into_inner(self) -> Vec<u8> {
        self.buf
    }
    pub fn i8(&mut self, v: i8) {
        self.buf.push(v as u8);
    }
    pub fn bool(&mut self, v: bool) {
        self.buf.push(v as u8);
    }
    pub fn i16(&mut self, v: i16) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }
    pub fn u16(&mut self, v: u16) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }
    pub fn i32(&mut self, v: i32) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }
    pub fn u32(&mut self, v: u32) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }
    pub fn i64(&mut self, v: i64) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }
    pub fn f64(&mut self, v: f64) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }
    pub fn uuid(&mut self, v: &Uuid) {
        self.buf.extend_from_slice(&v.0);
    }
    pub fn raw(&mut self, b: &[u8]) {
        self.buf.extend_from_slice(b);
    }
    pub fn unsigned_varint(&mut self, mut v: u32) {
        while v >= 0x80 {
            self.buf.push((v as u8) | 0x80);
            v >>= 7;
        }
        self.buf.push(v as u8);
    }
    pub fn varint(&mut self, v: i32) {
        self.unsigned_varint(((v << 1) ^ (v >> 31)) as u32);
    }
    pub fn varlong(&mut self, v: i64) {
        let mut z = ((v << 1) ^ (v >> 63)) as u64;
        while z >= 0x80 {
            self.buf.push((z as u8) | 0x80);
            z >>= 7;
        }
        self.buf.push(z as u8);
    }

    fn length(&mut self, len: Option<usize>, compact: bool, wide: bool, what: &'static str) -> W {
        match (len, compact) {
            (None, true) => self.unsigned_varint(0),
            (None, false) if wide => self.i32(-1),
            (None, false) => self.i16(-1),
            (Some(n), true) => {
                if n >= u32::MAX as usize {
                    return Err(EncodeError::TooLong { what, length: n });
                }
                self.unsigned_varint(n as u32 + 1)
            }
            (Some(n), false) if wide => {
                if n > i32::MAX as usize {
                    return Err(EncodeError::TooLong { what, length: n });
                }
                self.i32(n as i32)
            }
            (Some(n), false) => {
                if n > i16::MAX as usize {
                    return Err(EncodeError::TooLong { what, length: n });
                }
                self.i16(n as i16)
            }
        }
        Ok(())
    }

    pub fn nullable_string(&mut self, v: Option<&str>, compact: bool, what: &'static str) -> W {
        self.length(v.map(str::len), compact, false, what)?;
        if let Some(s) = v {
            self.raw(s.as_bytes());
        }
        Ok(())
    }
    pub fn string(&mut self, v: &str, compact: bool, what: &'static str) -> W {
        self.nullable_string(Some(v), compact, what)
    }
    pub fn nullable_bytes(&mut self, v: Option<&[u8]>, compact: bool, what: &'static str) -> W {
        self.length(v.map(<[u8]>::len), compact, true, what)?;
        if let Some(b) = v {
            self.raw(b);
        }
        Ok(())
    }
    pub fn bytes(&mut self, v: &[u8], compact: bool, what: &'static str) -> W {
        self.nullable_bytes(Some(v), compact, what)
    }
    pub fn array_len(&mut self, len: Option<usize>, compact: bool, what: &'static str) -> W {
        match (len, compact) {
            (None, true) => self.unsigned_varint(0),
            (None, false) => self.i32(-1),
            (Some(n), true) => {
                if n >= u32::MAX as usize {
                    return Err(EncodeError::TooLong { what, length: n });
                }
                self.unsigned_varint(n as u32 + 1)
            }
            (Some(n), false) => {
                if n > i32::MAX as usize {
                    return Err(EncodeError::TooLong { what, length: n });
                }
                self.i32(n as i32)
            }
        }
        Ok(())
    }

    /// Encodes into a fresh buffer (a tagged field's body).
    pub fn sub(encode: impl FnOnce(&mut Writer) -> W) -> Result<Vec<u8>, EncodeError> {
        let mut w = Writer::new();
        encode(&mut w)?;
        Ok(w.into_inner())
    }

    fn refuse_null(present: bool, null_ok: bool, what: &'static str, version: i16) -> W {
        if present || null_ok {
            Ok(())
        } else {
            Err(EncodeError::NullNotAllowed { what, version })
        }
    }

    /// A string that may be None, refused where the version does not allow null.
    pub fn opt_string(
        &mut self,
        v: Option<&str>,
        null_ok: bool,
        compact: bool,
        what: &'static str,
        version: i16,
    ) -> W {
        Self::refuse_null(v.is_some(), null_ok, what, version)?;
        self.nullable_string(v, compact, what)
    }

    /// Bytes that may be None, refused where the version does not allow null.
    pub fn opt_bytes(
        &mut self,
        v: Option<&[u8]>,
        null_ok: bool,
        compact: bool,
        what: &'static str,
        version: i16,
    ) -> W {
        Self::refuse_null(v.is_some(), null_ok, what, version)?;
        self.nullable_bytes(v, compact, what)
    }

    /// An array (None: null, refused unless `null_ok`), each element by `element`.
    pub fn array<T>(
        &mut self,
        items: Option<&[T]>,
        null_ok: bool,
        compact: bool,
        what: &'static str,
        version: i16,
        mut element: impl FnMut(&mut Writer, &T) -> W,
    ) -> W {
        Self::refuse_null(items.is_some(), null_ok, what, version)?;
        self.array_len(items.map(<[T]>::len), compact, what)?;
        for item in items.unwrap_or_default() {
            element(self, item)?;
        }
        Ok(())
    }

    /// A struct that may be None: an int8 marker where `nullable`, else it must be present.
    pub fn nullable_struct<T>(
        &mut self,
        v: Option<&T>,
        nullable: bool,
        what: &'static str,
        version: i16,
        encode: impl FnOnce(&mut Writer, &T) -> W,
    ) -> W {
        Self::refuse_null(v.is_some(), nullable, what, version)?;
        match v {
            None => {
                self.i8(-1);
                Ok(())
            }
            Some(x) => {
                if nullable {
                    self.i8(1);
                }
                encode(self, x)
            }
        }
    }

    /// Writes a tagged-field section: `known` holds (tag, encoded body) for fields with
    /// non-default values, already in tag order; unknown ones are merged in by tag.
    pub fn tagged_fields(&mut self, known: Vec<(u32, Vec<u8>)>, unknown: &[RawTaggedField]) {
        let mut all: Vec<(u32, &[u8])> = known.iter().map(|(t, b)| (*t, b.as_slice())).collect();
        all.extend(unknown.iter().map(|f| (f.tag, f.data.as_slice())));
        all.sort_by_key(|(t, _)| *t);
        self.unsigned_varint(all.len() as u32);
        for (tag, body) in all {
            self.unsigned_varint(tag);
            self.unsigned_varint(body.len() as u32);
            self.raw(body);
        }
    }
}

/// A message in Kafka's generated-schema sense: a request, response, header, metadata record or
/// data struct, decodable and encodable at each version of its schema.
pub trait Message: Sized + Default + Clone + fmt::Debug + PartialEq {
    const NAME: &'static str;
    const LOWEST_VERSION: i16;
    const HIGHEST_VERSION: i16;

    fn decode(r: &mut Reader<'_>, version: i16) -> Result<Self, DecodeError>;
    fn encode(&self, w: &mut Writer, version: i16) -> Result<(), EncodeError>;

    /// Decodes a whole buffer, refusing trailing bytes.
    fn decode_exact(bytes: &[u8], version: i16) -> Result<Self, DecodeError> {
        let mut r = Reader::new(bytes);
        let m = Self::decode(&mut r, version)?;
        if r.remaining() != 0 {
            return Err(DecodeError::Invalid(format!(
                "{} v{version}: {} trailing bytes after the message",
                Self::NAME,
                r.remaining()
            )));
        }
        Ok(m)
    }

    /// The message at the start of `bytes`, whatever follows it: Kafka's request parsing
    /// (`AbstractRequest.parseRequest`) ignores bytes after a request body.
    fn decode_prefix(bytes: &[u8], version: i16) -> Result<Self, DecodeError> {
        Self::decode(&mut Reader::new(bytes), version)
    }

    fn encode_to_vec(&self, version: i16) -> Result<Vec<u8>, EncodeError> {
        let mut w = Writer::new();
        self.encode(&mut w, version)?;
        Ok(w.into_inner())
    }
}

/// A body already encoded at the right version, so that `frame::encode_request` can frame bytes
/// built elsewhere (at a version negotiated with a peer, or by a test).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RawBody(pub Vec<u8>);

impl Message for RawBody {
    const NAME: &'static str = "RawBody";
    const LOWEST_VERSION: i16 = 0;
    const HIGHEST_VERSION: i16 = i16::MAX;
    fn decode(r: &mut Reader<'_>, _version: i16) -> Result<Self, DecodeError> {
        Ok(RawBody(r.rest().to_vec()))
    }
    fn encode(&self, w: &mut Writer, _version: i16) -> Result<(), EncodeError> {
        w.raw(&self.0);
        Ok(())
    }
}

/// Messages that are requests or responses of a Kafka API.
pub trait ApiMessage: Message {
    const API_KEY: i16;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip_at_the_edges() {
        for v in [0u32, 1, 127, 128, 16383, 16384, u32::MAX] {
            let mut w = Writer::new();
            w.unsigned_varint(v);
            assert_eq!(Reader::new(&w.buf).unsigned_varint("v").unwrap(), v);
        }
        for v in [0i64, -1, 1, i64::MIN, i64::MAX] {
            let mut w = Writer::new();
            w.varlong(v);
            assert_eq!(Reader::new(&w.buf).varlong("v").unwrap(), v);
        }
        for v in [0i32, -1, 1, i32::MIN, i32::MAX] {
            let mut w = Writer::new();
            w.varint(v);
            assert_eq!(Reader::new(&w.buf).varint("v").unwrap(), v);
        }
    }

    #[test]
    fn overlong_varint_is_an_error() {
        let bytes = [0xff, 0xff, 0xff, 0xff, 0xff, 0x01];
        assert!(matches!(
            Reader::new(&bytes).unsigned_varint("x"),
            Err(DecodeError::BadVarint { .. })
        ));
    }

    #[test]
    fn a_count_beyond_the_input_is_refused_before_allocating() {
        // 0x7fffffff elements claimed, 0 bytes present.
        let bytes = [0x7f, 0xff, 0xff, 0xff];
        assert!(Reader::new(&bytes).array_len(false, "arr").is_err());
        let bytes = [0x7f, 0xff];
        assert!(Reader::new(&bytes).nullable_string(false, "s").is_err());
    }

    #[test]
    fn uuid_prints_in_kafka_base64() {
        assert_eq!(Uuid::ONE.to_string(), "AAAAAAAAAAAAAAAAAAAAAQ");
        assert_eq!(Uuid::parse("AAAAAAAAAAAAAAAAAAAAAQ").unwrap(), Uuid::ONE);
    }
}

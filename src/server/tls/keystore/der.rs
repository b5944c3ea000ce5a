//! The little DER the store formats need: a reader of definite-length TLVs over a byte slice
//! (every length checked against what is left, nothing allocated), and a writer for the few
//! structures `pkcs12` re-wraps.

/// A DER structure did not parse; the `&'static str` says which.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Malformed(pub &'static str);

pub(super) const SEQUENCE: u8 = 0x30;
pub(super) const SET: u8 = 0x31;
pub(super) const INTEGER: u8 = 0x02;
pub(super) const OCTET_STRING: u8 = 0x04;
pub(super) const OID: u8 = 0x06;
pub(super) const BMP_STRING: u8 = 0x1e;
/// `[0]`, constructed (EXPLICIT).
pub(super) const CONTEXT_0: u8 = 0xa0;
/// `[0]`, primitive (IMPLICIT OCTET STRING).
pub(super) const CONTEXT_0_PRIMITIVE: u8 = 0x80;

/// One tag-length-value; `raw` is the whole encoding, `value` its contents.
#[derive(Debug, Clone, Copy)]
pub(super) struct Tlv<'a> {
    pub tag: u8,
    pub value: &'a [u8],
    pub raw: &'a [u8],
}

impl<'a> Tlv<'a> {
    /// The contents as a sequence of TLVs.
    pub fn reader(&self) -> Reader<'a> {
        Reader::new(self.value)
    }
}

/// Reads TLVs one after the other.
#[derive(Debug, Clone)]
pub(super) struct Reader<'a> {
    data: &'a [u8],
}

impl<'a> Reader<'a> {
    pub fn new(data: &'a [u8]) -> Reader<'a> {
        Reader { data }
    }

    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// The next TLV. Only single-byte tags and definite lengths (as DER has them).
    pub fn read(&mut self, what: &'static str) -> Result<Tlv<'a>, Malformed> {
        let data = self.data;
        let (&tag, rest) = data.split_first().ok_or(Malformed(what))?;
        if tag & 0x1f == 0x1f {
            return Err(Malformed(what));
        }
        let (&first, mut rest) = rest.split_first().ok_or(Malformed(what))?;
        let len = if first < 0x80 {
            usize::from(first)
        } else {
            let count = usize::from(first & 0x7f);
            // 0x80 is BER's indefinite length; more than 4 length bytes is beyond any store.
            if count == 0 || count > 4 || rest.len() < count {
                return Err(Malformed(what));
            }
            let mut len = 0usize;
            for &b in &rest[..count] {
                len = (len << 8) | usize::from(b);
            }
            rest = &rest[count..];
            len
        };
        if rest.len() < len {
            return Err(Malformed(what));
        }
        let header = data.len() - rest.len();
        self.data = &rest[len..];
        Ok(Tlv {
            tag,
            value: &rest[..len],
            raw: &data[..header + len],
        })
    }

    /// The next TLV, which must have tag `tag`.
    pub fn expect(&mut self, tag: u8, what: &'static str) -> Result<Tlv<'a>, Malformed> {
        let tlv = self.read(what)?;
        if tlv.tag != tag {
            return Err(Malformed(what));
        }
        Ok(tlv)
    }

    /// The next TLV if it has tag `tag`, else nothing read.
    pub fn optional(&mut self, tag: u8, what: &'static str) -> Result<Option<Tlv<'a>>, Malformed> {
        match self.data.first() {
            Some(&t) if t == tag => self.read(what).map(Some),
            _ => Ok(None),
        }
    }

    /// The next TLV, an INTEGER that fits an `i64` (as store versions and iteration counts do).
    pub fn small_integer(&mut self, what: &'static str) -> Result<i64, Malformed> {
        let tlv = self.expect(INTEGER, what)?;
        if tlv.value.is_empty() || tlv.value.len() > 8 {
            return Err(Malformed(what));
        }
        let mut v: i64 = if tlv.value[0] & 0x80 != 0 { -1 } else { 0 };
        for &b in tlv.value {
            v = (v << 8) | i64::from(b);
        }
        Ok(v)
    }
}

/// The single TLV that `data` starts with, and nothing after it (`exact`) or anything after it.
pub(super) fn single<'a>(
    data: &'a [u8],
    exact: bool,
    what: &'static str,
) -> Result<Tlv<'a>, Malformed> {
    let mut r = Reader::new(data);
    let tlv = r.read(what)?;
    if exact && !r.is_empty() {
        return Err(Malformed(what));
    }
    Ok(tlv)
}

/// `tag`, DER length and `value`.
pub(super) fn encode(tag: u8, value: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(value.len() + 6);
    out.push(tag);
    let len = value.len();
    if len < 0x80 {
        out.push(len as u8);
    } else {
        let bytes = len.to_be_bytes();
        let skip = bytes.iter().take_while(|&&b| b == 0).count();
        out.push(0x80 | (bytes.len() - skip) as u8);
        out.extend_from_slice(&bytes[skip..]);
    }
    out.extend_from_slice(value);
    out
}

/// An OBJECT IDENTIFIER's contents in dotted form (for error messages and comparisons in tests).
pub(super) fn oid_string(value: &[u8]) -> String {
    let mut parts: Vec<u64> = Vec::new();
    let mut acc: u64 = 0;
    for &b in value {
        acc = (acc << 7) | u64::from(b & 0x7f);
        if b & 0x80 == 0 {
            if parts.is_empty() {
                let first = (acc / 40).min(2);
                parts.push(first);
                parts.push(acc - first * 40);
            } else {
                parts.push(acc);
            }
            acc = 0;
        }
        if acc > u64::MAX >> 8 {
            return "?".into();
        }
    }
    parts
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(".")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_writes_lengths() {
        for len in [0usize, 1, 127, 128, 255, 256, 70_000] {
            let value = vec![7u8; len];
            let enc = encode(OCTET_STRING, &value);
            let tlv = single(&enc, true, "t").unwrap();
            assert_eq!(tlv.value, &value[..]);
            assert_eq!(tlv.raw, &enc[..]);
        }
    }

    #[test]
    fn refuses_what_does_not_fit() {
        assert!(single(&[0x30, 0x05, 1, 2], true, "t").is_err());
        assert!(single(&[0x30, 0x80, 0, 0], true, "t").is_err());
        assert!(single(&[0x30, 0x85, 1, 1, 1, 1, 1], true, "t").is_err());
        assert!(single(&[0x30], true, "t").is_err());
        assert!(single(&[0x30, 0x00, 0x00], true, "t").is_err());
        assert!(single(&[0x30, 0x00, 0x00], false, "t").is_ok());
    }

    #[test]
    fn oids() {
        assert_eq!(
            oid_string(&[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01]),
            "1.2.840.113549.1.1.1"
        );
    }
}

//! `Base64.getDecoder()`: the basic RFC 4648 alphabet, as Java 17 decodes it. Padding is
//! optional, but where present it must be complete (`TQ=` is refused, `TQ` and `TQ==` are
//! not); nothing may follow it; a lone last character is refused; non-zero trailing bits are
//! ignored (`TR==` decodes as `TQ==`). Every other character, whitespace included, is illegal.

/// Why Java's decoder throws `IllegalArgumentException` (its message, in kraftd's words; no
/// variant carries the input, which may be a secret).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Base64Error {
    #[error("an illegal base64 character at position {at}")]
    IllegalCharacter { at: usize },
    #[error("an incomplete padding at the end")]
    WrongEndingUnit,
    #[error("a lone last character")]
    NotEnoughValidBits,
    #[error("characters after the padding")]
    AfterPadding,
}

fn value(c: u8) -> Option<u32> {
    Some(match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => return None,
    } as u32)
}

/// Decodes `text` as `Base64.getDecoder().decode(text)` does.
pub fn decode(text: &str) -> Result<Vec<u8>, Base64Error> {
    let s = text.as_bytes();
    let mut out = Vec::with_capacity(s.len() / 4 * 3 + 2);
    let (mut bits, mut shift, mut i) = (0u32, 18i32, 0usize);
    while i < s.len() {
        let c = s[i];
        i += 1;
        if c == b'=' {
            // "=" at the start of a unit, or "xx=" not followed by a second "=".
            if shift == 18 || (shift == 6 && (i == s.len() || s[i] != b'=')) {
                return Err(Base64Error::WrongEndingUnit);
            }
            if shift == 6 {
                i += 1;
            }
            break;
        }
        // A non-ASCII char's first byte is not in the alphabet either, so a byte position is
        // a char position up to here.
        let v = value(c).ok_or(Base64Error::IllegalCharacter { at: i - 1 })?;
        bits |= v << shift;
        shift -= 6;
        if shift < 0 {
            out.extend_from_slice(&[(bits >> 16) as u8, (bits >> 8) as u8, bits as u8]);
            bits = 0;
            shift = 18;
        }
    }
    match shift {
        6 => out.push((bits >> 16) as u8),
        0 => out.extend_from_slice(&[(bits >> 16) as u8, (bits >> 8) as u8]),
        12 => return Err(Base64Error::NotEnoughValidBits),
        _ => {}
    }
    if i < s.len() {
        return Err(Base64Error::AfterPadding);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each verdict observed from `Base64.getDecoder().decode` on Java 17 (and from
    /// `kafka-storage format --add-scram` with the text as a salt).
    #[test]
    fn decodes_as_java() {
        let ok: &[(&str, &[u8])] = &[
            ("TWFu", b"Man"),
            ("TWE=", b"Ma"),
            ("TWE", b"Ma"),
            ("TQ==", b"M"),
            ("TQ", b"M"),
            ("YR==", b"a"),
            ("", b""),
            ("+/+/", &[0xfb, 0xff, 0xbf]),
        ];
        for (text, bytes) in ok {
            assert_eq!(decode(text).as_deref(), Ok(*bytes), "{text}");
        }
        let refused: &[(&str, Base64Error)] = &[
            ("TQ=", Base64Error::WrongEndingUnit),
            ("YWJj=", Base64Error::WrongEndingUnit),
            ("=", Base64Error::WrongEndingUnit),
            ("TQ=x", Base64Error::WrongEndingUnit),
            ("T", Base64Error::NotEnoughValidBits),
            ("TQ==TQ==", Base64Error::AfterPadding),
            ("TWE==", Base64Error::AfterPadding),
            ("%%%", Base64Error::IllegalCharacter { at: 0 }),
            ("Y-Q_", Base64Error::IllegalCharacter { at: 1 }),
            ("TW Fu", Base64Error::IllegalCharacter { at: 2 }),
            ("TWé", Base64Error::IllegalCharacter { at: 2 }),
        ];
        for (text, error) in refused {
            assert_eq!(decode(text), Err(*error), "{text}");
        }
    }
}

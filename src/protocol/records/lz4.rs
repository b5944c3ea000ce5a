//! Kafka's LZ4 framing (`Lz4BlockOutputStream` / `Lz4BlockInputStream`): the LZ4 frame format
//! restricted as Kafka's reader restricts it.
//!
//! ```text
//! magic 04 22 4D 18 · FLG · BD · [content size, 8 bytes LE, if FLG bit 3] · HC
//! blocks: [size int32 LE (bit 31: stored uncompressed) · data · [xxhash32 if FLG bit 4]]*
//! end mark 00000000 · [content checksum, 4 bytes, if FLG bit 2: not verified, as in Kafka]
//! ```
//! FLG must be version 01 with independent blocks and no reserved bits; BD selects a maximum
//! block size of 64 KiB, 256 KiB, 1 MiB or 4 MiB. HC is the second byte of the xxhash32 of the
//! descriptor (FLG..content size). Kafka writes FLG 0x60, BD 0x40 (64 KiB blocks).

use super::batch::Compression;
use super::error::ErrorKind;

const MAGIC: u32 = 0x184D_2204;
const UNCOMPRESSED_BIT: u32 = 0x8000_0000;

fn corrupt(message: String) -> ErrorKind {
    ErrorKind::Decompression {
        codec: Compression::Lz4,
        message,
    }
}

fn le32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

/// Decompresses a Kafka LZ4 frame into at most `limit` bytes.
pub(crate) fn decompress(input: &[u8], limit: usize) -> Result<Vec<u8>, ErrorKind> {
    let need = |at: usize, n: usize, what: &str| -> Result<(), ErrorKind> {
        if input.len() < at + n {
            Err(corrupt(format!("truncated {what} at byte {at}")))
        } else {
            Ok(())
        }
    };
    need(0, 6, "frame header")?;
    if le32(input, 0) != MAGIC {
        return Err(corrupt(format!("bad frame magic {:#010x}", le32(input, 0))));
    }
    let flg = input[4];
    let bd = input[5];
    if flg & 0x03 != 0 {
        return Err(corrupt("FLG reserved bits must be 0".into()));
    }
    if flg & 0x20 == 0 {
        return Err(corrupt(
            "dependent blocks are not supported (as in Kafka)".into(),
        ));
    }
    if flg >> 6 != 1 {
        return Err(corrupt(format!(
            "frame version {} is not supported",
            flg >> 6
        )));
    }
    let block_checksum = flg & 0x10 != 0;
    let content_size = flg & 0x08 != 0;
    if bd & 0x8F != 0 {
        return Err(corrupt("BD reserved bits must be 0".into()));
    }
    let size_code = (bd >> 4) & 7;
    if !(4..=7).contains(&size_code) {
        return Err(corrupt(format!(
            "block size code {size_code} (must be 4 to 7)"
        )));
    }
    let max_block = 1usize << (2 * size_code as usize + 8);
    let mut pos = 6;
    if content_size {
        need(pos, 8, "content size")?;
        pos += 8;
    }
    need(pos, 1, "header checksum")?;
    let hc = (xxh32(&input[4..pos], 0) >> 8) as u8;
    if input[pos] != hc {
        return Err(corrupt(format!(
            "frame descriptor checksum {:#04x}, expected {hc:#04x}",
            input[pos]
        )));
    }
    pos += 1;

    let mut out = Vec::new();
    // One block buffer for the whole frame (at most 4 MiB, less when the limit is lower), so
    // that many small blocks cost no more than their output.
    let mut scratch: Vec<u8> = Vec::new();
    loop {
        need(pos, 4, "block size")?;
        let word = le32(input, pos);
        pos += 4;
        let stored = word & UNCOMPRESSED_BIT != 0;
        let size = (word & !UNCOMPRESSED_BIT) as usize;
        if size == 0 {
            // End mark; Kafka skips the content checksum unverified and ignores what follows.
            return Ok(out);
        }
        if size > max_block {
            return Err(corrupt(format!(
                "block size {size} at byte {} exceeds the maximum {max_block}",
                pos - 4
            )));
        }
        need(pos, size, "block")?;
        let block = &input[pos..pos + size];
        if block_checksum {
            need(pos + size, 4, "block checksum")?;
            if xxh32(block, 0) != le32(input, pos + size) {
                return Err(corrupt(format!("block checksum mismatch at byte {pos}")));
            }
        }
        if stored {
            if size > limit - out.len() {
                return Err(too_large(limit));
            }
            out.extend_from_slice(block);
        } else {
            // A block inflates to at most max_block bytes; never decode past the limit.
            let room = max_block.min(limit.saturating_add(1));
            if scratch.len() < room {
                scratch.resize(room, 0);
            }
            match lz4_flex::block::decompress_into(block, &mut scratch[..room]) {
                Ok(n) if n > limit - out.len() => return Err(too_large(limit)),
                Ok(n) => out.extend_from_slice(&scratch[..n]),
                Err(lz4_flex::block::DecompressError::OutputTooSmall { .. })
                    if room < max_block =>
                {
                    return Err(too_large(limit))
                }
                Err(e) => return Err(corrupt(format!("block at byte {pos}: {e}"))),
            }
        }
        pos += size + if block_checksum { 4 } else { 0 };
    }
}

fn too_large(limit: usize) -> ErrorKind {
    ErrorKind::DecompressedTooLarge {
        codec: Compression::Lz4,
        limit,
    }
}

const P1: u32 = 0x9E37_79B1;
const P2: u32 = 0x85EB_CA77;
const P3: u32 = 0xC2B2_AE3D;
const P4: u32 = 0x27D4_EB2F;
const P5: u32 = 0x1656_67B1;

fn round(acc: u32, lane: u32) -> u32 {
    acc.wrapping_add(lane.wrapping_mul(P2))
        .rotate_left(13)
        .wrapping_mul(P1)
}

/// XXH32, the checksum of the LZ4 frame format.
pub(crate) fn xxh32(data: &[u8], seed: u32) -> u32 {
    let mut rest = data;
    let mut h = if data.len() >= 16 {
        let mut v = [
            seed.wrapping_add(P1).wrapping_add(P2),
            seed.wrapping_add(P2),
            seed,
            seed.wrapping_sub(P1),
        ];
        while rest.len() >= 16 {
            for (i, lane) in v.iter_mut().enumerate() {
                *lane = round(*lane, le32(rest, 4 * i));
            }
            rest = &rest[16..];
        }
        v[0].rotate_left(1)
            .wrapping_add(v[1].rotate_left(7))
            .wrapping_add(v[2].rotate_left(12))
            .wrapping_add(v[3].rotate_left(18))
    } else {
        seed.wrapping_add(P5)
    };
    h = h.wrapping_add(data.len() as u32);
    while rest.len() >= 4 {
        h = h
            .wrapping_add(le32(rest, 0).wrapping_mul(P3))
            .rotate_left(17)
            .wrapping_mul(P4);
        rest = &rest[4..];
    }
    for &b in rest {
        h = h
            .wrapping_add((b as u32).wrapping_mul(P5))
            .rotate_left(11)
            .wrapping_mul(P1);
    }
    h ^= h >> 15;
    h = h.wrapping_mul(P2);
    h ^= h >> 13;
    h = h.wrapping_mul(P3);
    h ^ (h >> 16)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xxh32_matches_reference_values() {
        assert_eq!(xxh32(b"", 0), 0x02CC_5D05);
        assert_eq!(xxh32(b"abc", 0), 0x32D1_53FF);
        assert_eq!(
            xxh32(b"Nobody inspects the spammish repetition", 0),
            0xE229_3B2F
        );
    }

    #[test]
    fn kafka_descriptor_checksum() {
        // Kafka's FLG 0x60, BD 0x40 -> HC 0x82.
        assert_eq!((xxh32(&[0x60, 0x40], 0) >> 8) as u8, 0x82);
    }

    #[test]
    fn stored_and_compressed_blocks_and_limits() {
        let data: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
        let mut frame = vec![0x04, 0x22, 0x4D, 0x18, 0x60, 0x40, 0x82];
        for chunk in data.chunks(65536) {
            let c = lz4_flex::block::compress(chunk);
            frame.extend_from_slice(&(c.len() as u32).to_le_bytes());
            frame.extend_from_slice(&c);
        }
        let raw = b"stored";
        frame.extend_from_slice(&(raw.len() as u32 | UNCOMPRESSED_BIT).to_le_bytes());
        frame.extend_from_slice(raw);
        frame.extend_from_slice(&[0, 0, 0, 0]);
        let mut expected = data.clone();
        expected.extend_from_slice(raw);
        assert_eq!(decompress(&frame, 1 << 20).unwrap(), expected);
        assert_eq!(decompress(&frame, 1000), Err(too_large(1000)));
        for cut in 0..frame.len() - 4 {
            assert!(decompress(&frame[..cut], 1 << 20).is_err(), "cut {cut}");
        }
        let mut bad = frame.clone();
        bad[6] ^= 1;
        assert!(decompress(&bad, 1 << 20).is_err());
    }
}

//! Decompressing a batch's records, bounded. Kafka compresses the records of a batch as one
//! stream, with its Java libraries' framing:
//!
//! - gzip: `GZIPOutputStream` (one or more gzip members);
//! - snappy: xerial `SnappyOutputStream` framing: the 16-byte header `82 'SNAPPY' 00`, version 1,
//!   compatible version 1, then chunks of [int32 big-endian length, raw snappy block]. Like
//!   xerial's reader, input without that header is read as one raw snappy block;
//! - lz4: the LZ4 frame format with independent blocks (`Lz4BlockOutputStream`), see `lz4.rs`;
//! - zstd: zstd frames (zstd-jni).
//!
//! Every decoder stops at the output limit: a batch that would inflate beyond it is an error,
//! never an allocation.

use std::io::Read;

use super::batch::Compression;
use super::error::ErrorKind;
use super::lz4;

/// The default cap on one batch's decompressed records: 64 MiB (Kafka's own metadata batches are
/// at most 8 MiB; data batches are bounded by the topic's max message size, 1 MiB by default).
pub const DEFAULT_MAX_DECOMPRESSED_BYTES: usize = 64 << 20;

/// Limits applied while reading records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadLimits {
    /// The largest decompressed record payload accepted for one batch.
    pub max_decompressed_bytes: usize,
}

impl Default for ReadLimits {
    fn default() -> Self {
        ReadLimits {
            max_decompressed_bytes: DEFAULT_MAX_DECOMPRESSED_BYTES,
        }
    }
}

fn corrupt(codec: Compression, message: impl Into<String>) -> ErrorKind {
    ErrorKind::Decompression {
        codec,
        message: message.into(),
    }
}

fn too_large(codec: Compression, limit: usize) -> ErrorKind {
    ErrorKind::DecompressedTooLarge { codec, limit }
}

/// Decompresses `input` (a batch's record bytes) with `codec`, producing at most `limit` bytes.
pub fn decompress(codec: Compression, input: &[u8], limit: usize) -> Result<Vec<u8>, ErrorKind> {
    match codec {
        Compression::None => {
            if input.len() > limit {
                return Err(too_large(codec, limit));
            }
            Ok(input.to_vec())
        }
        Compression::Gzip => read_capped(flate2::read::MultiGzDecoder::new(input), codec, limit),
        Compression::Snappy => snappy(input, limit),
        Compression::Lz4 => lz4::decompress(input, limit),
        Compression::Zstd => zstd(input, limit),
    }
}

/// Reads a decoder to its end, growing the output no further than `limit` (+1 byte to detect
/// overflow).
fn read_capped(mut r: impl Read, codec: Compression, limit: usize) -> Result<Vec<u8>, ErrorKind> {
    let mut out = Vec::new();
    let mut chunk = [0u8; 16 * 1024];
    loop {
        let n = match r.read(&mut chunk) {
            Ok(0) => return Ok(out),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(corrupt(codec, e.to_string())),
        };
        if out.len() + n > limit {
            return Err(too_large(codec, limit));
        }
        out.extend_from_slice(&chunk[..n]);
    }
}

const SNAPPY_MAGIC: [u8; 8] = [0x82, b'S', b'N', b'A', b'P', b'P', b'Y', 0];
const SNAPPY_HEADER_SIZE: usize = 16;

/// Appends the raw snappy block `block` to `out`, checking its declared size first.
fn snappy_block(block: &[u8], out: &mut Vec<u8>, limit: usize, at: usize) -> Result<(), ErrorKind> {
    let codec = Compression::Snappy;
    let n = snap::raw::decompress_len(block)
        .map_err(|e| corrupt(codec, format!("block at byte {at}: {e}")))?;
    if n > limit - out.len() {
        return Err(too_large(codec, limit));
    }
    let start = out.len();
    out.resize(start + n, 0);
    let written = snap::raw::Decoder::new()
        .decompress(block, &mut out[start..])
        .map_err(|e| corrupt(codec, format!("block at byte {at}: {e}")))?;
    out.truncate(start + written);
    Ok(())
}

fn snappy(input: &[u8], limit: usize) -> Result<Vec<u8>, ErrorKind> {
    let codec = Compression::Snappy;
    let mut out = Vec::new();
    if input.is_empty() {
        return Ok(out);
    }
    if input.len() < SNAPPY_HEADER_SIZE || input[..8] != SNAPPY_MAGIC {
        // Not xerial-framed: one raw block, as xerial's SnappyInputStream falls back to.
        snappy_block(input, &mut out, limit, 0)?;
        return Ok(out);
    }
    let mut pos = 0;
    while pos < input.len() {
        if input[pos..].starts_with(&SNAPPY_MAGIC) {
            // A stream header: at the start, or of a concatenated stream.
            if input.len() - pos < SNAPPY_HEADER_SIZE {
                return Err(corrupt(
                    codec,
                    format!("truncated stream header at byte {pos}"),
                ));
            }
            let compatible = i32::from_be_bytes(input[pos + 12..pos + 16].try_into().unwrap());
            if compatible < 1 {
                return Err(corrupt(
                    codec,
                    format!("unsupported stream compatible version {compatible} at byte {pos}"),
                ));
            }
            pos += SNAPPY_HEADER_SIZE;
            continue;
        }
        if input.len() - pos < 4 {
            return Err(corrupt(
                codec,
                format!("truncated chunk length at byte {pos}"),
            ));
        }
        let len = i32::from_be_bytes(input[pos..pos + 4].try_into().unwrap());
        if len < 0 || len as usize > input.len() - pos - 4 {
            return Err(corrupt(
                codec,
                format!(
                    "chunk length {len} at byte {pos}, {} bytes remain",
                    input.len() - pos - 4
                ),
            ));
        }
        let block = &input[pos + 4..pos + 4 + len as usize];
        snappy_block(block, &mut out, limit, pos + 4)?;
        pos += 4 + len as usize;
    }
    Ok(out)
}

const ZSTD_MAGIC: u32 = 0xFD2F_B528;

/// What a zstd frame header asks for.
struct ZstdHeader {
    /// Where the window descriptor byte is (absent in single-segment frames).
    window_descriptor_at: Option<usize>,
    window: u64,
    /// The declared content size, if any.
    content_size: Option<u64>,
}

/// A zstd frame header cut short.
#[derive(Debug, thiserror::Error)]
#[error("truncated frame header")]
struct TruncatedFrameHeader;

fn zstd_header(frame: &[u8]) -> Result<ZstdHeader, TruncatedFrameHeader> {
    let byte = |i: usize| frame.get(i).copied().ok_or(TruncatedFrameHeader);
    let fhd = byte(4)?;
    let fcs_flag = fhd >> 6;
    let single_segment = fhd & 0x20 != 0;
    let dict_bytes = [0usize, 1, 2, 4][(fhd & 3) as usize];
    let mut at = 5;
    let mut window = 0;
    let window_descriptor_at = if single_segment {
        None
    } else {
        let wd = byte(at)? as u64;
        let base = 1u64 << (10 + (wd >> 3));
        window = base + (base / 8) * (wd & 7);
        at += 1;
        Some(at - 1)
    };
    at += dict_bytes;
    let fcs_bytes = match fcs_flag {
        0 if single_segment => 1,
        0 => 0,
        1 => 2,
        2 => 4,
        _ => 8,
    };
    let mut content_size = None;
    if fcs_bytes > 0 {
        let mut v = 0u64;
        for i in 0..fcs_bytes {
            v |= (byte(at + i)? as u64) << (8 * i);
        }
        if fcs_bytes == 2 {
            v += 256;
        }
        content_size = Some(v);
    }
    if single_segment {
        window = content_size.unwrap_or(0);
    }
    Ok(ZstdHeader {
        window_descriptor_at,
        window,
        content_size,
    })
}

/// A window descriptor for at least `needed` bytes and at most 96 MiB (ruzstd's cap is 100 MiB).
fn zstd_window_descriptor(needed: u64) -> u8 {
    let log = 64 - needed.max(1024).saturating_sub(1).leading_zeros();
    if log <= 26 {
        ((log - 10) << 3) as u8
    } else {
        (16 << 3) | 4 // 2^26 + 4 * 2^23 = 96 MiB
    }
}

/// Decodes zstd frames (and skips skippable ones) up to `limit` bytes of output. A frame's
/// window is what the decoder keeps in memory; since output beyond `limit` is refused anyway,
/// a larger window than `limit` is never needed, so the header is read with its window lowered
/// to cover `limit` (Kafka's level-22 batches ask for 128 MiB).
fn zstd(input: &[u8], limit: usize) -> Result<Vec<u8>, ErrorKind> {
    use ruzstd::decoding::{FrameDecoder, StreamingDecoder};
    let codec = Compression::Zstd;
    let mut out = Vec::new();
    let mut pos = 0;
    let mut decoder = FrameDecoder::new();
    while pos < input.len() {
        let rest = &input[pos..];
        if rest.len() < 4 {
            return Err(corrupt(
                codec,
                format!("truncated frame magic at byte {pos}"),
            ));
        }
        let magic = u32::from_le_bytes(rest[..4].try_into().unwrap());
        if magic & 0xFFFF_FFF0 == 0x184D_2A50 {
            // A skippable frame: magic, 4-byte little-endian size, content.
            let size = rest
                .get(4..8)
                .map(|b| u32::from_le_bytes(b.try_into().unwrap()) as usize);
            match size {
                Some(size) if size <= rest.len() - 8 => {
                    pos += 8 + size;
                    continue;
                }
                _ => {
                    return Err(corrupt(
                        codec,
                        format!("truncated skippable frame at byte {pos}"),
                    ))
                }
            }
        }
        if magic != ZSTD_MAGIC {
            return Err(corrupt(
                codec,
                format!("bad frame magic {magic:#010x} at byte {pos}"),
            ));
        }
        let header = zstd_header(rest).map_err(|e| corrupt(codec, format!("{e} at byte {pos}")))?;
        let allowed = (limit - out.len()) as u64;
        if header.content_size.is_some_and(|n| n > allowed) {
            return Err(too_large(codec, limit));
        }
        let mut patched = [0u8; 6];
        let head_len = header.window_descriptor_at.map_or(0, |at| at + 1);
        patched[..head_len].copy_from_slice(&rest[..head_len]);
        if let Some(at) = header.window_descriptor_at {
            let lowered = zstd_window_descriptor(limit as u64);
            let base = 1u64 << (10 + (lowered >> 3));
            if header.window > base + (base / 8) * (lowered & 7) as u64 {
                patched[at] = lowered;
            }
        }
        let mut source = (&patched[..head_len]).chain(&rest[head_len..]);
        let mut stream = StreamingDecoder::new_with_decoder(&mut source, &mut decoder)
            .map_err(|e| corrupt(codec, format!("frame at byte {pos}: {e}")))?;
        let bytes = match read_capped(&mut stream, codec, limit - out.len()) {
            Err(ErrorKind::DecompressedTooLarge { .. }) => return Err(too_large(codec, limit)),
            Err(ErrorKind::Decompression { message, .. }) => {
                return Err(corrupt(codec, format!("frame at byte {pos}: {message}")))
            }
            other => other?,
        };
        out.extend_from_slice(&bytes);
        if let (Some(stored), Some(computed)) = (
            decoder.get_checksum_from_data(),
            decoder.get_calculated_checksum(),
        ) {
            if stored != computed {
                return Err(corrupt(
                    codec,
                    format!("frame at byte {pos}: content checksum mismatch"),
                ));
            }
        }
        let (a, b) = source.get_ref();
        let consumed = (head_len - a.len()) + (rest.len() - head_len - b.len());
        pos += consumed.max(1);
    }
    Ok(out)
}

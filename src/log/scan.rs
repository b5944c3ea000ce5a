//! Reading a file of record batches (a segment or a snapshot) from its start, batch by batch, in
//! bounded chunks, checking every batch's CRC, and saying precisely where and why the valid
//! batches stop. The file may be bytes in memory: the simulation's storage recovers with the
//! same scan.

use std::fmt;
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

use crate::protocol::records::{batches, BatchView, SplitEnd};

/// Bytes read per refill of the scan window.
const CHUNK: usize = 1 << 20;

/// A batch larger than this is treated as corruption rather than waited for. Kafka caps
/// metadata log batches at 8 MiB (`internal.metadata.max.batch.size.in.bytes`), so a larger
/// length field can only be garbage; the margin tolerates a raised test setting.
pub const MAX_BATCH_SIZE_ON_DISK: usize = 128 << 20;

/// Why a scan stopped before the end of the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScanStop {
    /// The file ends inside the batch at `position` (a write cut short by a crash).
    Torn {
        position: u64,
        needed: usize,
        available: usize,
    },
    /// The bytes at `position` are not a valid next batch.
    Corrupt { position: u64, reason: String },
}

impl ScanStop {
    pub fn position(&self) -> u64 {
        match self {
            ScanStop::Torn { position, .. } | ScanStop::Corrupt { position, .. } => *position,
        }
    }
}

impl fmt::Display for ScanStop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScanStop::Torn {
                needed, available, ..
            } => write!(
                f,
                "torn write: the last batch needs {needed} bytes but only {available} are present"
            ),
            ScanStop::Corrupt { reason, .. } => f.write_str(reason),
        }
    }
}

/// The result of a scan: bytes of valid batches from the start, and why they end there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScanOutcome {
    pub valid_len: u64,
    pub stop: Option<ScanStop>,
}

/// What a scan reads from: a file, or the bytes of one in memory.
pub trait ReadAt {
    /// Fills `buf` from `position`; an error if the source ends first.
    fn read_exact_at(&self, buf: &mut [u8], position: u64) -> io::Result<()>;
}

impl ReadAt for File {
    fn read_exact_at(&self, buf: &mut [u8], position: u64) -> io::Result<()> {
        FileExt::read_exact_at(self, buf, position)
    }
}

impl ReadAt for [u8] {
    fn read_exact_at(&self, buf: &mut [u8], position: u64) -> io::Result<()> {
        let bytes = usize::try_from(position)
            .ok()
            .and_then(|start| self.get(start..start.checked_add(buf.len())?));
        match bytes {
            Some(bytes) => {
                buf.copy_from_slice(bytes);
                Ok(())
            }
            None => Err(io::Error::from(io::ErrorKind::UnexpectedEof)),
        }
    }
}

/// Scans the first `file_len` bytes of `file`. `visit(position, batch)` sees each complete
/// batch whose CRC, codec and record count are valid, in order; returning `Err(reason)` stops
/// the scan there as corrupt (e.g. an offset that does not follow the previous batch), with
/// the reason's text in [`ScanStop::Corrupt`].
pub fn scan_file<R: ReadAt + ?Sized, E: fmt::Display>(
    file: &R,
    file_len: u64,
    mut visit: impl FnMut(u64, &BatchView<'_>) -> Result<(), E>,
) -> io::Result<ScanOutcome> {
    let mut window: Vec<u8> = Vec::new();
    let mut window_start = 0u64;
    let mut want = CHUNK;
    let stop_at = |stop: ScanStop| ScanOutcome {
        valid_len: stop.position(),
        stop: Some(stop),
    };
    loop {
        let window_end = window_start + window.len() as u64;
        if window.len() < want && window_end < file_len {
            let add = (want - window.len()).min((file_len - window_end) as usize);
            let old = window.len();
            window.resize(old + add, 0);
            file.read_exact_at(&mut window[old..], window_end)?;
        }
        let at_eof = window_start + window.len() as u64 >= file_len;
        let mut it = batches(&window).with_max_batch_size(MAX_BATCH_SIZE_ON_DISK);
        for batch in it.by_ref() {
            let position = window_start + batch.position() as u64;
            if let Err(e) = batch.validate() {
                return Ok(stop_at(ScanStop::Corrupt {
                    position,
                    reason: e.kind.to_string(),
                }));
            }
            if let Err(reason) = visit(position, &batch) {
                return Ok(stop_at(ScanStop::Corrupt {
                    position,
                    reason: reason.to_string(),
                }));
            }
        }
        let end = it.end().cloned().unwrap_or(SplitEnd::Clean);
        match end {
            SplitEnd::Clean if at_eof => {
                return Ok(ScanOutcome {
                    valid_len: file_len,
                    stop: None,
                })
            }
            SplitEnd::Clean => {
                window_start += window.len() as u64;
                window.clear();
                want = CHUNK;
            }
            SplitEnd::Torn {
                position,
                needed,
                available,
            } => {
                if at_eof {
                    return Ok(stop_at(ScanStop::Torn {
                        position: window_start + position as u64,
                        needed,
                        available,
                    }));
                }
                window.drain(..position);
                window_start += position as u64;
                want = needed.max(CHUNK);
            }
            SplitEnd::Corrupt { position, error } => {
                return Ok(stop_at(ScanStop::Corrupt {
                    position: window_start + position as u64,
                    reason: error.kind.to_string(),
                }))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::records::BatchBuilder;

    fn batch(base: i64, value_len: usize) -> Vec<u8> {
        let mut b = BatchBuilder::new(base).partition_leader_epoch(1);
        b.append(0, None, Some(&vec![b'x'; value_len]), &[])
            .unwrap();
        b.build().unwrap()
    }

    fn scan(bytes: &[u8]) -> (Vec<(u64, i64)>, ScanOutcome) {
        let path = std::env::temp_dir().join(format!(
            "kraftd-scan-{}-{}",
            std::process::id(),
            rand::random::<u32>()
        ));
        std::fs::write(&path, bytes).unwrap();
        let file = File::open(&path).unwrap();
        let mut seen = Vec::new();
        let outcome = scan_file(&file, bytes.len() as u64, |pos, b| {
            seen.push((pos, b.base_offset()));
            Ok::<(), std::convert::Infallible>(())
        })
        .unwrap();
        std::fs::remove_file(&path).unwrap();
        (seen, outcome)
    }

    #[test]
    fn batches_straddling_chunks_and_larger_than_a_chunk_are_read_whole() {
        let mut bytes = Vec::new();
        let mut expected = Vec::new();
        // Many small batches past the first chunk, one of 1.5 MiB, then more small ones.
        for (i, len) in (0..30_000)
            .map(|i| (i, 10 + i % 90))
            .chain([(30_000, 3 << 19)])
            .chain((30_001..30_100).map(|i| (i, 50)))
        {
            expected.push((bytes.len() as u64, i as i64));
            bytes.extend(batch(i as i64, len));
        }
        assert!(bytes.len() > 3 * CHUNK);
        let (seen, outcome) = scan(&bytes);
        assert_eq!(
            outcome,
            ScanOutcome {
                valid_len: bytes.len() as u64,
                stop: None
            }
        );
        assert_eq!(seen, expected);

        // A torn last batch, and a flipped byte beyond the first chunk.
        let torn = &bytes[..bytes.len() - 10];
        let (seen, outcome) = scan(torn);
        assert_eq!(seen.len(), expected.len() - 1);
        assert!(
            matches!(outcome.stop, Some(ScanStop::Torn { position, .. }) if position == expected.last().unwrap().0)
        );
        let mut flipped = bytes.clone();
        let (pos, _) = expected[20_000];
        flipped[pos as usize + 70] ^= 1;
        let (seen, outcome) = scan(&flipped);
        assert_eq!(seen.len(), 20_000);
        assert_eq!(outcome.valid_len, pos);
        assert!(outcome.stop.unwrap().to_string().contains("CRC"));
    }

    #[test]
    fn garbage_lengths_are_corruption_not_a_wait() {
        let mut bytes = batch(0, 5);
        let good = bytes.len() as u64;
        bytes.extend([0u8; 8]);
        bytes.extend(i32::MAX.to_be_bytes());
        bytes.extend([2u8; 100]);
        let (seen, outcome) = scan(&bytes);
        assert_eq!(seen.len(), 1);
        assert!(
            matches!(outcome.stop, Some(ScanStop::Corrupt { position, .. }) if position == good)
        );
        // A visitor's refusal stops the scan at that batch.
        let path = std::env::temp_dir().join(format!("kraftd-scan-refuse-{}", std::process::id()));
        let mut two = batch(0, 5);
        two.extend(batch(7, 5));
        std::fs::write(&path, &two).unwrap();
        let out = scan_file(&File::open(&path).unwrap(), two.len() as u64, |_, b| {
            if b.base_offset() == 7 {
                Err("offset 7 does not follow 0")
            } else {
                Ok(())
            }
        })
        .unwrap();
        assert_eq!(out.valid_len, good);
        assert_eq!(out.stop.unwrap().to_string(), "offset 7 does not follow 0");
        std::fs::remove_file(&path).unwrap();
    }
}

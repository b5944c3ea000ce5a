//! Splitting a byte buffer (a segment or snapshot file's contents, a Fetch response's records)
//! into consecutive batches, stopping cleanly where the batches stop.

use super::batch::{peek_length, BatchView, LOG_OVERHEAD};
use super::error::{ErrorKind, RecordsError};

/// How the batches of a buffer ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SplitEnd {
    /// Every byte belongs to a complete batch.
    Clean,
    /// The buffer ends inside the batch that starts at `position`: `needed` bytes would complete
    /// it (its header or its declared size) and `available` remain. A partial write at the end
    /// of a segment, or a Fetch response cut at its size limit (Kafka ignores that tail).
    Torn {
        position: usize,
        needed: usize,
        available: usize,
    },
    /// The bytes at `position` are not a v2 batch: a length below the minimum or above the
    /// configured maximum, or a magic byte other than 2.
    Corrupt {
        position: usize,
        error: RecordsError,
    },
}

impl SplitEnd {
    /// Where the complete batches end: the buffer's length when clean.
    pub fn position(&self, buffer_len: usize) -> usize {
        match self {
            SplitEnd::Clean => buffer_len,
            SplitEnd::Torn { position, .. } | SplitEnd::Corrupt { position, .. } => *position,
        }
    }

    pub fn is_clean(&self) -> bool {
        matches!(self, SplitEnd::Clean)
    }
}

/// An iterator over the complete batches at the start of a buffer. It stops at the first bytes
/// that are not a complete batch; [`BatchIter::end`] then says why. It checks sizes and magic
/// only: call [`BatchView::validate`] for the CRC.
#[derive(Debug, Clone)]
pub struct BatchIter<'a> {
    buf: &'a [u8],
    pos: usize,
    max_batch_size: usize,
    end: Option<SplitEnd>,
}

/// The batches of `buf`, in order.
pub fn batches(buf: &[u8]) -> BatchIter<'_> {
    BatchIter {
        buf,
        pos: 0,
        max_batch_size: usize::MAX,
        end: None,
    }
}

impl<'a> BatchIter<'a> {
    /// Treats a batch larger than `max` bytes (length + 12) as corruption rather than a torn
    /// tail, as Kafka does with its max message size.
    pub fn with_max_batch_size(mut self, max: usize) -> Self {
        self.max_batch_size = max;
        self
    }

    /// Bytes of complete batches returned so far.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Why iteration stopped, once it has.
    pub fn end(&self) -> Option<&SplitEnd> {
        self.end.as_ref()
    }

    fn stop(&mut self, end: SplitEnd) -> Option<BatchView<'a>> {
        self.end = Some(end);
        None
    }
}

impl<'a> Iterator for BatchIter<'a> {
    type Item = BatchView<'a>;

    fn next(&mut self) -> Option<BatchView<'a>> {
        if self.end.is_some() {
            return None;
        }
        let rest = &self.buf[self.pos..];
        if rest.is_empty() {
            return self.stop(SplitEnd::Clean);
        }
        let position = self.pos;
        if let Some(length) = peek_length(rest) {
            let size = LOG_OVERHEAD as i64 + length as i64;
            if length >= 0 && size as u64 > self.max_batch_size as u64 {
                let error = RecordsError::at(position + 8, ErrorKind::BadBatchLength { length });
                return self.stop(SplitEnd::Corrupt { position, error });
            }
        }
        match BatchView::parse_at(rest, position) {
            Ok(batch) => {
                self.pos += batch.size();
                Some(batch)
            }
            Err(error) => match error.kind {
                ErrorKind::Truncated {
                    needed, available, ..
                } => self.stop(SplitEnd::Torn {
                    position,
                    needed,
                    available,
                }),
                _ => self.stop(SplitEnd::Corrupt { position, error }),
            },
        }
    }
}

/// All complete batches of a buffer and how they ended.
#[derive(Debug, Clone)]
pub struct Split<'a> {
    pub batches: Vec<BatchView<'a>>,
    pub end: SplitEnd,
}

impl Split<'_> {
    /// Bytes covered by complete batches.
    pub fn valid_bytes(&self) -> usize {
        self.batches.iter().map(BatchView::size).sum()
    }
}

/// Splits `buf` into its complete batches (a `Vec` of at most `buf.len() / 61` views).
pub fn split_batches(buf: &[u8]) -> Split<'_> {
    let mut it = batches(buf);
    let batches: Vec<_> = it.by_ref().collect();
    let end = it.end.take().unwrap_or(SplitEnd::Clean);
    Split { batches, end }
}

//! One message's bytes through both codecs. kafka-protocol only ever sees bytes that kraftd
//! encoded or that real Kafka wrote: on some malformed inputs it aborts the process (a length
//! taken from the wire sizes an allocation), which no test harness can catch.

use std::panic::{catch_unwind, AssertUnwindSafe};

use kafka_protocol::protocol::{Decodable, Encodable};
use kraftd::protocol::codec::Message;

use crate::gen::{Arbitrary, Gen};

/// Decodes with kafka-protocol, refusing trailing bytes, and re-encodes at the same version.
/// Its own size computation must agree with what it wrote.
fn kafka_protocol_round_trip<P: Decodable + Encodable>(
    bytes: &[u8],
    version: i16,
) -> Result<Vec<u8>, String> {
    let run = || -> Result<Vec<u8>, String> {
        let mut buf = bytes;
        let p = P::decode(&mut buf, version).map_err(|e| format!("kafka-protocol decode: {e}"))?;
        if !buf.is_empty() {
            return Err(format!(
                "kafka-protocol decode left {} of {} bytes unread",
                buf.len(),
                bytes.len()
            ));
        }
        let mut out = Vec::new();
        p.encode(&mut out, version)
            .map_err(|e| format!("kafka-protocol encode: {e}"))?;
        let size = p
            .compute_size(version)
            .map_err(|e| format!("kafka-protocol compute_size: {e}"))?;
        if size != out.len() {
            return Err(format!(
                "kafka-protocol computes {size} bytes but writes {}",
                out.len()
            ));
        }
        Ok(out)
    };
    catch_unwind(AssertUnwindSafe(run))
        .unwrap_or_else(|_| Err("kafka-protocol panicked (message above)".into()))
}

fn kraftd_round_trip<K: Message>(bytes: &[u8], version: i16) -> Result<Vec<u8>, String> {
    let k = K::decode_exact(bytes, version).map_err(|e| format!("kraftd decode: {e}"))?;
    k.encode_to_vec(version)
        .map_err(|e| format!("kraftd encode: {e}"))
}

/// Where two byte strings first differ, with hex context from both sides.
pub fn byte_diff(left: &str, a: &[u8], right: &str, b: &[u8]) -> String {
    let at = a
        .iter()
        .zip(b)
        .position(|(x, y)| x != y)
        .unwrap_or(a.len().min(b.len()));
    let hex = |s: &[u8]| {
        let lo = at.saturating_sub(6).min(s.len());
        let hi = (at + 10).min(s.len());
        s[lo..hi]
            .iter()
            .map(|x| format!("{x:02x}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    format!(
        "{left} {} bytes, {right} {} bytes, first difference at offset {at}: {left} [{}] {right} [{}]",
        a.len(),
        b.len(),
        hex(a),
        hex(b)
    )
}

/// Bytes real Kafka or kraftd wrote: kraftd must re-encode them unchanged; kafka-protocol must
/// read kraftd's bytes and write the same bytes back; and kraftd must read kafka-protocol's
/// bytes and write them back unchanged.
pub fn check_bytes<K: Message, P: Decodable + Encodable>(
    bytes: &[u8],
    version: i16,
) -> Result<(), String> {
    let kraftd = kraftd_round_trip::<K>(bytes, version)?;
    if kraftd != bytes {
        return Err(format!(
            "kraftd does not re-encode its input: {}",
            byte_diff("input", bytes, "kraftd", &kraftd)
        ));
    }
    let kp = kafka_protocol_round_trip::<P>(&kraftd, version)?;
    if kp != kraftd {
        return Err(byte_diff("kraftd", &kraftd, "kafka-protocol", &kp));
    }
    let back = kraftd_round_trip::<K>(&kp, version)?;
    if back != kp {
        return Err(format!(
            "kafka-protocol's bytes through kraftd: {}",
            byte_diff("kafka-protocol", &kp, "kraftd", &back)
        ));
    }
    Ok(())
}

/// A generated value valid at `version`: kraftd must encode it, decode its bytes back to the
/// same value, and the bytes must then pass `check_bytes`. Returns how many bytes that was.
pub fn check_generated<K: Message + Arbitrary, P: Decodable + Encodable>(
    seed: u64,
    version: i16,
) -> Result<usize, String> {
    let value = K::arbitrary(&mut Gen::new(seed), version);
    let bytes = value
        .encode_to_vec(version)
        .map_err(|e| format!("kraftd refuses a value valid for the version: {e}\n{value:?}"))?;
    match K::decode_exact(&bytes, version) {
        Ok(decoded) if decoded == value => {}
        Ok(decoded) => {
            return Err(format!(
                "kraftd decodes its own bytes to another value:\nwrote {value:?}\nread  {decoded:?}"
            ))
        }
        Err(e) => return Err(format!("kraftd cannot decode its own bytes: {e}")),
    }
    check_bytes::<K, P>(&bytes, version).map_err(|e| format!("{e}\nvalue: {value:?}"))?;
    Ok(bytes.len())
}

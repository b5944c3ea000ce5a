//! Bytes real Kafka wrote, from protocol-tests/vectors (protocol-tests/README.md): schema
//! vectors `<Message>/v<N>[-<variant>].bin`, and the bodies of the frames a Java controller
//! exchanged in `live/<n>-<Api>-v<N>-{request,response}.bin`.

use std::fs;
use std::path::{Path, PathBuf};

use kraftd::protocol::codec::{Message, Reader};
use kraftd::protocol::frame::{request_header_version, response_header_version};
use kraftd::protocol::messages::{schema, RequestHeader, ResponseHeader};

pub struct Vector {
    pub label: String,
    pub message: String,
    pub version: i16,
    pub bytes: Vec<u8>,
}

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("protocol-tests/vectors")
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}; run `make vectors`", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    out.sort();
    out
}

/// "v12" or "v12-unknown-tags" to 12.
fn version_of(stem: &str) -> Option<i16> {
    stem.strip_prefix('v')?.split('-').next()?.parse().ok()
}

pub fn schema_vectors() -> Vec<Vector> {
    let mut out = Vec::new();
    for msg_dir in files(&dir()) {
        let message = msg_dir.file_name().unwrap().to_string_lossy().into_owned();
        if !msg_dir.is_dir() || message == "live" {
            continue;
        }
        for bin in files(&msg_dir) {
            if bin.extension().is_none_or(|x| x != "bin") {
                continue;
            }
            let stem = bin.file_stem().unwrap().to_string_lossy().into_owned();
            let version = version_of(&stem)
                .unwrap_or_else(|| panic!("{}: not v<N>[-<variant>].bin", bin.display()));
            out.push(Vector {
                label: format!("{message}/{stem}"),
                message: message.clone(),
                version,
                bytes: fs::read(&bin).unwrap(),
            });
        }
    }
    out
}

/// The body of each live frame, its header decoded and cut off with kraftd's header codecs.
pub fn live_bodies() -> Vec<Vector> {
    let mut out = Vec::new();
    for path in files(&dir().join("live")) {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let Some(stem) = name.strip_suffix(".bin") else {
            continue;
        };
        let parts: Vec<&str> = stem.split('-').collect();
        let [_, api, ver, side] = parts[..] else {
            panic!("{}: not <n>-<Api>-v<N>-<side>.bin", path.display());
        };
        let version: i16 = ver[1..].parse().unwrap();
        let (message, request) = match side {
            "request" => (format!("{api}Request"), true),
            _ => (format!("{api}Response"), false),
        };
        let api_key = schema(&message)
            .and_then(|e| e.api_key)
            .unwrap_or_else(|| panic!("{name}: kraftd has no codec for {message}"));
        let frame = fs::read(&path).unwrap();
        let mut r = Reader::new(&frame);
        if request {
            let hv = request_header_version(api_key, version).expect("a known API");
            RequestHeader::decode(&mut r, hv).unwrap();
        } else {
            ResponseHeader::decode(&mut r, response_header_version(api_key, version)).unwrap();
        }
        out.push(Vector {
            label: format!("live/{stem}"),
            message,
            version,
            bytes: frame[r.position()..].to_vec(),
        });
    }
    out
}

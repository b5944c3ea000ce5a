#!/usr/bin/env python3
"""Builds the fuzz seed corpora from the golden vectors captured from real Kafka.

message: 2 selector bytes (index into the generated REGISTRY, which follows codegen/messages.txt;
version offset from the schema's lowest version) followed by a vector's bytes.
request_frame: the live request frames captured from Kafka's own tools.
records: selector byte 0 + each record-batch vector (protocol-tests/records/vectors/*.bin);
selector 2 + a framed metadata record value (frame version 1, type, version, then a metadata
record schema vector); selector 3 + key length 4, control key, then a control record schema
vector (see kraftd::fuzzing::record_batches).
snapshot: raft response vectors and record-batch vectors (see
kraftd::fuzzing::snapshot_and_raft_responses).
"""
import json, os, re, sys

root = os.path.dirname(os.path.abspath(__file__))
repo = os.path.dirname(root)
names = [l.split("#")[0].strip() for l in open(os.path.join(repo, "codegen/messages.txt"))]
names = [n for n in names if n]
lowest = {}
mod = open(os.path.join(repo, "src/protocol/messages/mod.rs")).read()
for name, lo in re.findall(r'entry!\((\w+), \w+, [^,]+, (\d+),', mod):
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

records_dir = os.path.join(repo, "protocol-tests/records/vectors")
os.makedirs(os.path.join(out, "records"), exist_ok=True)
records_manifest = json.load(open(os.path.join(records_dir, "manifest.json")))
for v in records_manifest["vectors"]:
    with open(os.path.join(out, "records", f"batches-{v['name']}"), "wb") as fh:
        fh.write(b"\0" + open(os.path.join(records_dir, v["name"] + ".bin"), "rb").read())
    count += 1


def uvarint(n):
    b = bytearray()
    while n >= 0x80:
        b.append((n & 0x7F) | 0x80)
        n >>= 7
    b.append(n)
    return bytes(b)


def schema_vectors(name):
    d = os.path.join(vec_dir, name)
    for f in sorted(os.listdir(d)) if os.path.isdir(d) else []:
        m = re.match(r"v(\d+)(-[\w-]+)?\.bin$", f)
        if m:
            yield f, int(m.group(1)), open(os.path.join(d, f), "rb").read()


for t in records_manifest["metadataRecordTypes"]:
    for f, version, body in schema_vectors(t["class"]):
        with open(os.path.join(out, "records", f"metadata-{t['class']}-{f}"), "wb") as fh:
            fh.write(b"\2" + uvarint(1) + uvarint(t["id"]) + uvarint(version) + body)
        count += 1
control = {"LeaderChangeMessage": 2, "SnapshotHeaderRecord": 3, "SnapshotFooterRecord": 4,
           "KRaftVersionRecord": 5, "VotersRecord": 6}
for name, type_id in control.items():
    for f, version, body in schema_vectors(name):
        if version != 0:
            continue  # Kafka reads control values at version 0
        with open(os.path.join(out, "records", f"control-{name}-{f}"), "wb") as fh:
            fh.write(b"\3\4" + bytes([0, 0, 0, type_id]) + body)
        count += 1
# snapshot: the response vectors of the raft APIs (their bodies), and checkpoint-shaped inputs
# made of the captured batch vectors (a real checkpoint is such batches back to back).
os.makedirs(os.path.join(out, "snapshot"), exist_ok=True)
for api in ["VoteResponse", "BeginQuorumEpochResponse", "EndQuorumEpochResponse", "FetchResponse",
            "FetchSnapshotResponse", "DescribeQuorumResponse"]:
    for f, version, body in schema_vectors(api):
        with open(os.path.join(out, "snapshot", f"{api}-{f}"), "wb") as fh:
            fh.write(body)
        count += 1
batch_dir = os.path.join(repo, "protocol-tests/records/vectors")
for f in sorted(os.listdir(batch_dir)):
    if f.endswith(".bin"):
        with open(os.path.join(batch_dir, f), "rb") as src, \
                open(os.path.join(out, "snapshot", f"batches-{f}"), "wb") as fh:
            fh.write(src.read())
        count += 1
print(f"{count} seeds in {out}")

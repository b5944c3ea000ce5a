#!/usr/bin/env python3
"""A TCP proxy that forwards Kafka connections unchanged and saves every frame it sees.

usage: frame_proxy.py LISTEN_PORT TARGET_HOST:TARGET_PORT OUT_DIR

Each request/response pair is saved as OUT_DIR/<n>-<Api>-v<version>-{request,response}.bin:
the frame without its 4-byte size prefix (header + body), exactly as it crossed the wire. <n>
numbers requests in arrival order across all connections; a response gets its request's number
(matched by correlation id on the same connection). Runs until killed (SIGTERM).
"""

import os
import socket
import struct
import sys
import threading

# API names for the file names (Kafka's ApiKeys names); others are saved as Api<key>.
API_NAMES = {
    0: "Produce", 1: "Fetch", 3: "Metadata", 17: "SaslHandshake", 18: "ApiVersions",
    19: "CreateTopics", 20: "DeleteTopics", 32: "DescribeConfigs", 33: "AlterConfigs",
    36: "SaslAuthenticate", 37: "CreatePartitions", 44: "IncrementalAlterConfigs",
    46: "ListPartitionReassignments", 52: "Vote", 53: "BeginQuorumEpoch", 54: "EndQuorumEpoch",
    55: "DescribeQuorum", 56: "AlterPartition", 57: "UpdateFeatures", 58: "Envelope",
    59: "FetchSnapshot", 60: "DescribeCluster", 62: "BrokerRegistration", 63: "BrokerHeartbeat",
    64: "UnregisterBroker", 67: "AllocateProducerIds", 70: "ControllerRegistration",
    73: "AssignReplicasToDirs", 80: "AddRaftVoter", 81: "RemoveRaftVoter", 82: "UpdateRaftVoter",
}

lock = threading.Lock()
next_number = [1]


def read_exact(sock, n):
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


def read_frame(sock):
    """Returns (size prefix, frame) or None at end of stream."""
    prefix = read_exact(sock, 4)
    if prefix is None:
        return None
    (size,) = struct.unpack(">i", prefix)
    frame = read_exact(sock, size)
    if frame is None:
        return None
    return prefix, frame


def save(out_dir, name, frame):
    path = os.path.join(out_dir, name)
    with open(path, "wb") as f:
        f.write(frame)


def pump_requests(client, server, pending, out_dir):
    while True:
        got = read_frame(client)
        if got is None:
            break
        prefix, frame = got
        api_key, api_version, correlation_id = struct.unpack(">hhi", frame[:8])
        with lock:
            n = next_number[0]
            next_number[0] += 1
        stem = "%02d-%s-v%d" % (n, API_NAMES.get(api_key, "Api%d" % api_key), api_version)
        pending[correlation_id] = stem
        save(out_dir, stem + "-request.bin", frame)
        server.sendall(prefix + frame)
    server.shutdown(socket.SHUT_WR)


def pump_responses(server, client, pending, out_dir):
    while True:
        got = read_frame(server)
        if got is None:
            break
        prefix, frame = got
        (correlation_id,) = struct.unpack(">i", frame[:4])
        stem = pending.pop(correlation_id, None)
        if stem is not None:
            save(out_dir, stem + "-response.bin", frame)
        client.sendall(prefix + frame)
    client.shutdown(socket.SHUT_WR)


def quietly(pump):
    """A reset connection just ends its pump; the tool on the other side reports real errors."""
    def run(*args):
        try:
            pump(*args)
        except OSError:
            pass
    return run


def handle(client, target, out_dir):
    try:
        server = socket.create_connection(target)
    except OSError as e:
        print("frame_proxy: cannot reach %s:%d: %s" % (target[0], target[1], e), file=sys.stderr)
        client.close()
        return
    pending = {}  # correlation id -> file stem; the request is saved before it is forwarded
    threads = [
        threading.Thread(target=quietly(pump_requests), args=(client, server, pending, out_dir), daemon=True),
        threading.Thread(target=quietly(pump_responses), args=(server, client, pending, out_dir), daemon=True),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    client.close()
    server.close()


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    listen_port = int(sys.argv[1])
    host, port = sys.argv[2].rsplit(":", 1)
    out_dir = sys.argv[3]
    os.makedirs(out_dir, exist_ok=True)
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", listen_port))
    listener.listen()
    while True:
        client, _ = listener.accept()
        threading.Thread(target=handle, args=(client, (host, int(port)), out_dir), daemon=True).start()


if __name__ == "__main__":
    main()

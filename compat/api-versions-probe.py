#!/usr/bin/env python3
"""Waits until host:port answers an ApiVersions v0 request, then prints the APIs it serves.

Used by `make run-smoke` to check that `make run` brings up a controller that answers Kafka's
handshake. Exits 0 on a valid answer, 1 when the deadline passes.
"""
import socket, struct, sys, time

host, port, deadline_s = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
deadline = time.time() + deadline_s
# ApiVersions (18) v0, correlation id 7, null client id, empty body.
request = struct.pack(">hhih", 18, 0, 7, -1)
while time.time() < deadline:
    try:
        with socket.create_connection((host, port), timeout=5) as s:
            s.sendall(struct.pack(">i", len(request)) + request)
            data = b""
            while len(data) < 4 or len(data) < 4 + struct.unpack(">i", data[:4])[0]:
                chunk = s.recv(65536)
                if not chunk:
                    raise ConnectionError("closed")
                data += chunk
        size, corr, err, n = struct.unpack(">iihi", data[:14])
        apis = [struct.unpack(">hhh", data[14 + 6 * i:20 + 6 * i]) for i in range(n)]
        if corr != 7 or err != 0 or not apis:
            print(f"bad ApiVersions answer: corr={corr} error={err} apis={apis}", file=sys.stderr)
            sys.exit(1)
        print(f"{host}:{port} answers ApiVersions: " + ", ".join(f"{k}:{lo}-{hi}" for k, lo, hi in apis))
        sys.exit(0)
    except (OSError, ConnectionError, struct.error):
        time.sleep(0.2)
print(f"{host}:{port} did not answer ApiVersions within {deadline_s}s", file=sys.stderr)
sys.exit(1)

#!/usr/bin/env python3
"""An OTLP/HTTP sink for bench/otel.sh: `otlp_sink.py PORT accept|hang`.

accept: answers every POST with 200 and an empty protobuf body (an empty
Export*ServiceResponse), counting requests and bytes on stderr at exit.
hang:   reads each request and never answers (a collector that is stuck).

Not a receiver that decodes anything: tests/support/otlp.rs is that. This only
stands for the far end of the wire while the benchmark measures the server.
"""
import signal
import socket
import sys
import threading


def serve(conn, mode, stats):
    conn.settimeout(None)
    buf = b""
    try:
        while True:
            while b"\r\n\r\n" not in buf:
                chunk = conn.recv(65536)
                if not chunk:
                    return
                buf += chunk
            head, buf = buf.split(b"\r\n\r\n", 1)
            length = 0
            for line in head.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value.strip())
            while len(buf) < length:
                chunk = conn.recv(65536)
                if not chunk:
                    return
                buf += chunk
            buf = buf[length:]
            stats[0] += 1
            stats[1] += length
            if mode == "hang":
                threading.Event().wait()
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\nContent-Length: 0\r\n\r\n")
    except OSError:
        return
    finally:
        conn.close()


def main():
    port, mode = int(sys.argv[1]), sys.argv[2]
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(64)
    stats = [0, 0]
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        while True:
            conn, _ = listener.accept()
            threading.Thread(target=serve, args=(conn, mode, stats), daemon=True).start()
    except KeyboardInterrupt:
        pass
    finally:
        print(f"otlp_sink: {stats[0]} requests, {stats[1]} bytes", file=sys.stderr)


if __name__ == "__main__":
    main()

"""An Arrow IPC stream producer for the tests of our non-replayable stream sources.

Serves the generated rows (generated_rows.py: id int64, payload utf8, ts
timestamp[ms, UTC]) as a plain Arrow IPC stream written by pyarrow, over one
of

  --tcp PORT      127.0.0.1:PORT (0 picks a free one)
  --unix PATH     a Unix socket at PATH
  --http PORT     HTTP on 127.0.0.1:PORT, any GET path, the stream as the body
  --stdout        once, to its standard output (what a pipe into stdin reads)

and prints where it listens (the port, or the socket path) as its first stdout
line. It serves one connection at a time until killed, so a resumable client
can reconnect. With --stdout it prints nothing else, writes the stream once
(flushing after each message) and exits; it never resumes.

--resumable speaks the resume handshake of the stream spec: over a socket the
client writes first, one JSON line {"thalweg":"resume","stream":"<id or
empty>","next":n}, and is answered {"stream":"<id>","first":f} with f the batch
boundary at or below n; over HTTP the headers Thalweg-Resume-Next,
Thalweg-Stream and Thalweg-First-Offset carry the same. Every row is retained,
except those below --forget-below (a request for them is answered
{"error":...} or HTTP 410). The stream id is --stream-id: a producer restarted
with the same arguments serves the same rows under the same id.

Faults, counted in batches of this process, numbered from 0:
  --kill-after-batches K   os._exit(9) once K batches are written (mid-stream,
                           no end-of-stream marker)
  --malformed-at-batch B   garbage bytes instead of batch B's message, then the
                           connection is closed
  --delay-ms MS            a pause before each batch
"""

import argparse
import http.server
import json
import os
import socket
import sys
import time

import generated_rows

END_OF_STREAM = b"\xff\xff\xff\xff\x00\x00\x00\x00"
# A framed message (continuation marker, a 32-byte metadata length) whose
# "flatbuffer" is not one: a reader must fail on it, not misread it.
GARBAGE = b"\xff\xff\xff\xff" + (32).to_bytes(4, "little") + b"\xa5" * 32


class Refused(Exception):
    """The position asked for cannot be served; the message goes back to the client."""

    def __init__(self, message: str, http_status: int):
        super().__init__(message)
        self.http_status = http_status


class Producer:
    def __init__(self, args):
        self.args = args
        self.stream_id = args.stream_id or f"generated-{args.rows}-{args.batch_rows}-{args.payload_bytes}"
        self.batches_written = 0

    def first_for(self, stream: str, wanted: int) -> int:
        """Where a resumed stream restarts for a client that asks for row `wanted`."""
        a = self.args
        if stream not in ("", self.stream_id):
            raise Refused(f"unknown stream {stream!r}; this producer serves {self.stream_id!r}", 404)
        if wanted < a.forget_below:
            raise Refused(f"rows below {a.forget_below} are no longer retained (asked for {wanted})", 410)
        if wanted < 0 or wanted > a.rows:
            raise Refused(f"next {wanted} is outside the stream's rows 0..{a.rows}", 410)
        return max(generated_rows.boundary_at_or_below(wanted, a.batch_rows), a.forget_below)

    def write_stream(self, send, first: int) -> None:
        """Writes the IPC stream of rows first.. through `send` (bytes -> None), with the faults."""
        a = self.args
        send(generated_rows.SCHEMA.serialize().to_pybytes())
        for start in range(first, a.rows, a.batch_rows):
            if a.delay_ms > 0:
                time.sleep(a.delay_ms / 1000.0)
            if a.malformed_at_batch is not None and self.batches_written == a.malformed_at_batch:
                send(GARBAGE)
                return
            count = min(a.batch_rows, a.rows - start)
            send(generated_rows.batch_of(start, count, a.payload_bytes).serialize().to_pybytes())
            self.batches_written += 1
            if a.kill_after_batches is not None and self.batches_written >= a.kill_after_batches:
                os._exit(9)
        send(END_OF_STREAM)


def read_line(conn: socket.socket, limit: int = 64 * 1024) -> bytes:
    line = b""
    while not line.endswith(b"\n"):
        chunk = conn.recv(1)
        if not chunk:
            raise ConnectionError("the client closed before ending its resume line")
        line += chunk
        if len(line) > limit:
            raise ValueError("the resume line is longer than 64 KiB")
    return line


def serve_socket(producer: Producer, listener: socket.socket) -> None:
    while True:
        conn, _ = listener.accept()
        with conn:
            try:
                first = 0
                if producer.args.resumable:
                    try:
                        request = json.loads(read_line(conn))
                        if not isinstance(request, dict) or request.get("thalweg") != "resume":
                            raise ValueError('the first line must be {"thalweg":"resume",...}')
                        first = producer.first_for(str(request.get("stream") or ""), int(request.get("next") or 0))
                    except (Refused, ValueError, TypeError) as e:
                        conn.sendall((json.dumps({"error": str(e)}) + "\n").encode())
                        continue
                    answer = {"stream": producer.stream_id, "first": first}
                    conn.sendall((json.dumps(answer, separators=(",", ":")) + "\n").encode())
                producer.write_stream(conn.sendall, first)
            except (ConnectionError, OSError) as e:
                print(f"ipc_producer: connection ended: {e}", file=sys.stderr, flush=True)


def http_handler(producer: Producer):
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - the name http.server dispatches to
            first = 0
            headers = {"Content-Type": "application/vnd.apache.arrow.stream"}
            if producer.args.resumable:
                try:
                    wanted = int(self.headers.get("Thalweg-Resume-Next") or 0)
                    first = producer.first_for(self.headers.get("Thalweg-Stream") or "", wanted)
                except Refused as e:
                    self.send_error(e.http_status, str(e))
                    return
                except ValueError as e:
                    self.send_error(400, str(e))
                    return
                headers["Thalweg-Stream"] = producer.stream_id
                headers["Thalweg-First-Offset"] = str(first)
            self.send_response(200)
            for k, v in headers.items():
                self.send_header(k, v)
            self.end_headers()  # HTTP/1.0: the body ends when the connection closes
            try:
                producer.write_stream(lambda b: (self.wfile.write(b), self.wfile.flush()), first)
            except (ConnectionError, OSError) as e:
                print(f"ipc_producer: connection ended: {e}", file=sys.stderr, flush=True)

        def log_message(self, format, *args):  # noqa: A002 - http.server's signature
            print("ipc_producer: " + format % args, file=sys.stderr, flush=True)

    return Handler


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--tcp", type=int, metavar="PORT")
    where.add_argument("--unix", metavar="PATH")
    where.add_argument("--http", type=int, metavar="PORT")
    where.add_argument("--stdout", action="store_true")
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--batch-rows", type=int, default=100)
    parser.add_argument("--payload-bytes", type=int, default=0, help="0: payload is row-<id>")
    parser.add_argument("--resumable", action="store_true")
    parser.add_argument("--stream-id", default="")
    parser.add_argument("--forget-below", type=int, default=0, metavar="ROW")
    parser.add_argument("--kill-after-batches", type=int, metavar="K")
    parser.add_argument("--malformed-at-batch", type=int, metavar="B")
    parser.add_argument("--delay-ms", type=float, default=0)
    args = parser.parse_args()
    if args.rows < 0 or args.batch_rows <= 0:
        parser.error("--rows must be >= 0 and --batch-rows > 0")
    if args.stdout and args.resumable:
        parser.error("--stdout never resumes")
    producer = Producer(args)

    if args.stdout:
        out = sys.stdout.buffer

        def send(data: bytes) -> None:
            out.write(data)
            out.flush()

        producer.write_stream(send, 0)
    elif args.http is not None:
        server = http.server.HTTPServer(("127.0.0.1", args.http), http_handler(producer))
        print(server.server_address[1], flush=True)
        server.serve_forever()
    elif args.unix is not None:
        if os.path.exists(args.unix):
            os.unlink(args.unix)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(args.unix)
        listener.listen(8)
        print(args.unix, flush=True)
        serve_socket(producer, listener)
    else:
        listener = socket.create_server(("127.0.0.1", args.tcp))
        print(listener.getsockname()[1], flush=True)
        serve_socket(producer, listener)


if __name__ == "__main__":
    main()

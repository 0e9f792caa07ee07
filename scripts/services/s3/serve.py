"""Run moto's S3 emulation on one port, with every request serialised.

Used by scripts/services/s3.sh; not a public entry point.

Why not plain `moto_server`: moto checks `If-None-Match: *` / `If-Match` on
PutObject and then stores the object in two separate steps, and moto_server
serves requests on concurrent threads.  With large bodies two racing
conditional PUTs can therefore both get 200 (8 writers with 20 MB bodies:
5 rounds in 40 had 2-3 winners), and concurrent writes to one key also
fail with 500 "read of closed file".  Holding one lock around each request
makes the check-and-write atomic, as on AWS, and removes the 500s.  Request bodies that declare a
Content-Length are read before the lock is taken, so a slow upload does not
stall other clients.
"""

import argparse
import io
import os
import signal
import sys
import threading

from moto.moto_server.werkzeug_app import (
    DomainDispatcherApplication,
    MotoRequestHandler,
    create_backend_app,
)
from werkzeug.serving import run_simple


class Serialised:
    def __init__(self, app):
        self.app = app
        self.lock = threading.Lock()

    def __call__(self, environ, start_response):
        length = environ.get("CONTENT_LENGTH")
        if length and length.isdigit() and not environ.get("wsgi.input_terminated"):
            body = environ["wsgi.input"].read(int(length))
            environ["wsgi.input"] = io.BytesIO(body)
            environ["CONTENT_LENGTH"] = str(len(body))
        with self.lock:
            result = self.app(environ, start_response)
            try:
                chunks = list(result)
            finally:
                close = getattr(result, "close", None)
                if close is not None:
                    close()
        return chunks


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    os.environ.setdefault("MOTO_PORT", str(args.port))

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    signal.signal(signal.SIGINT, lambda *_: sys.exit(0))

    app = DomainDispatcherApplication(create_backend_app)
    run_simple(
        args.host,
        args.port,
        Serialised(app),
        threaded=True,
        request_handler=MotoRequestHandler,
    )


if __name__ == "__main__":
    main()

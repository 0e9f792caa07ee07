"""Live streams of the Flight test server: generated rows served by DoGet, as a Flight source reads.

DoAction `generate` creates one; DoGet with ticket `{"stream":name,"from":n}`
reads it. A resumable stream (the default) starts at the batch boundary at or
below `from` and labels each batch `{"offset":<its first row>}`; a stream
generated with `"resumable": false` ignores `from` and sends no labels, as a
producer that cannot seek. The rows are regenerated from their ids on every
read, so every position stays retained.

Besides the spec's fields, `generate` takes `delay_ms` (a pause before each
batch, to keep a stream open), `fail_after_batches` (the first DoGet that
has sent that many batches is aborted with UNAVAILABLE, once, so a source's
reconnect and resume can be tested) and `payloads` (a list of strings: the
stream's rows are that many, with those payloads instead of generated ones,
so a test can write the records it means to read back).
"""

import json
import threading
import time

import pyarrow as pa
import pyarrow.flight as flight

import generated_rows


class LiveStream:
    def __init__(self, spec: dict):
        payloads = spec.get("payloads")
        if payloads is not None and not (
            isinstance(payloads, list) and all(isinstance(p, str) for p in payloads)
        ):
            raise ValueError('generate: "payloads" must be a list of strings')
        self.payloads = payloads
        self.rows = len(payloads) if payloads is not None else int(spec["rows"])
        self.batch_rows = int(spec.get("batch_rows") or 1024)
        self.payload_bytes = int(spec.get("payload_bytes") or 0)
        self.resumable = bool(spec.get("resumable", True))
        self.delay_ms = float(spec.get("delay_ms") or 0)
        fail = spec.get("fail_after_batches")
        self._fail_after = None if fail is None else int(fail)
        self._lock = threading.Lock()
        if self.rows < 0 or self.batch_rows <= 0 or self.payload_bytes < 0:
            raise ValueError("generate: rows >= 0, batch_rows > 0 and payload_bytes >= 0 are needed")

    def _take_failure(self):
        """The batch count after which this read aborts, if the one-shot failure is still armed."""
        with self._lock:
            fail, self._fail_after = self._fail_after, None
            return fail

    def read(self, ticket: dict) -> flight.GeneratorStream:
        start = 0
        if self.resumable:
            wanted = int(ticket.get("from") or 0)
            if wanted < 0 or wanted > self.rows:
                raise ValueError(f"from {wanted} is outside the stream's rows 0..{self.rows}")
            start = generated_rows.boundary_at_or_below(wanted, self.batch_rows)
        fail_after = self._take_failure()

        def batches():
            sent = 0
            for first in range(start, self.rows, self.batch_rows):
                if fail_after is not None and sent >= fail_after:
                    raise flight.FlightUnavailableError(
                        f"injected failure after {sent} batches (fail_after_batches)"
                    )
                if self.delay_ms > 0:
                    time.sleep(self.delay_ms / 1000.0)
                count = min(self.batch_rows, self.rows - first)
                batch = (
                    generated_rows.batch_with_payloads(first, self.payloads[first : first + count])
                    if self.payloads is not None
                    else generated_rows.batch_of(first, count, self.payload_bytes)
                )
                sent += 1
                if self.resumable:
                    yield batch, pa.py_buffer(json.dumps({"offset": first}, separators=(",", ":")).encode())
                else:
                    yield batch

        return flight.GeneratorStream(generated_rows.SCHEMA, batches())


class LiveStreams:
    def __init__(self):
        self._lock = threading.Lock()
        self._by_name = {}

    def generate(self, spec: dict) -> None:
        name = spec.get("stream")
        if not isinstance(name, str) or name == "":
            raise ValueError('generate: "stream" must be a non-empty string')
        stream = LiveStream(spec)
        with self._lock:
            self._by_name[name] = stream

    def get(self, name: str):
        with self._lock:
            return self._by_name.get(name)

    def drop(self, name: str) -> bool:
        with self._lock:
            return self._by_name.pop(name, None) is not None

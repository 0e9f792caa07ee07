"""The PutResults of one DoPut stream, sent from their own thread with the configured faults.

The DoPut handler stores a batch (fsynced) and then hands its seq to an
AckSender; the sender writes `{"seq":n}` once `ack_delay_ms` has passed since
the batch became durable, so a slow ack never holds up the reading of the
next batch (as a real server's group commit would not). With `reorder`, the
acks of each pair of batches go out swapped (2, 1, 4, 3, ...); a last odd one
goes out alone when the stream ends.
"""

import json
import queue
import threading
import time

import pyarrow as pa

_END = object()


class AckSender:
    def __init__(self, writer, ack_delay_ms: float = 0, reorder: bool = False):
        self._writer = writer
        self._delay = max(0.0, float(ack_delay_ms or 0)) / 1000.0
        self._reorder = bool(reorder)
        self._queue = queue.Queue()
        self._finished = False
        self.error = None  # the exception that stopped the sender (the client went away)
        self._thread = threading.Thread(target=self._run, name="put-acks", daemon=True)
        self._thread.start()

    def durable(self, seq: int) -> None:
        """Batch `seq` is written and fsynced: its PutResult may go out (after the delay)."""
        self._queue.put((seq, time.monotonic() + self._delay))

    def finish(self) -> None:
        """Sends every ack still owed (a held reorder partner too) and waits until they are out."""
        if self._finished:
            return
        self._finished = True
        self._queue.put(_END)
        self._thread.join()

    def _send(self, seq: int, due: float) -> None:
        wait = due - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        body = json.dumps({"seq": seq}, separators=(",", ":")).encode()
        self._writer.write(pa.py_buffer(body))

    def _run(self) -> None:
        held = None
        try:
            while True:
                item = self._queue.get()
                if item is _END:
                    if held is not None:
                        self._send(*held)
                    return
                if not self._reorder:
                    self._send(*item)
                elif held is None:
                    held = item
                else:
                    self._send(*item)
                    self._send(*held)
                    held = None
        except Exception as e:  # noqa: BLE001 - reported by the handler, which owns the call
            self.error = e

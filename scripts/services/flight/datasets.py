"""Durable datasets of the Flight test server: what a DoPut stored, read back by window.

A dataset is a folder under the data dir (its name percent-encoded) holding

  batches.arrows  the schema message, then each batch's encapsulated IPC
                  message appended in arrival order (Arrow's IPC stream format
                  without an end-of-stream marker);
  index.jsonl     one JSON line per batch: the topic/partition/start/end its
                  DoPut metadata named, and the batch's byte position and
                  length in batches.arrows.

A batch is durable once both files are written and fsynced, data first: a
crash between the two leaves bytes no index line points at, which are never
read. Only then is its PutResult sent (the sink's ack means durable).
"""

import json
import os
import shutil
import threading
import urllib.parse

import pyarrow as pa

DATA_FILE = "batches.arrows"
INDEX_FILE = "index.jsonl"


def _fsync_dir(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _append_durably(path: str, data: bytes) -> int:
    """Appends `data` to `path` and fsyncs it; returns the position it was written at."""
    with open(path, "ab") as f:
        position = f.tell()
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    return position


class Dataset:
    """One dataset's files, appended under a lock (DoPut streams may write it concurrently)."""

    def __init__(self, folder: str):
        self.folder = folder
        self.lock = threading.Lock()
        self.schema = None
        self.entries = []  # the index lines, in order
        data = os.path.join(folder, DATA_FILE)
        if os.path.exists(data):
            with open(data, "rb") as f:
                self.schema = pa.ipc.read_schema(pa.ipc.read_message(f))
            index = os.path.join(folder, INDEX_FILE)
            if os.path.exists(index):
                with open(index, "r+b") as f:
                    text = f.read()
                    # A torn last line (a crash mid-write) was never acknowledged:
                    # cut it off so the next line does not run into it.
                    whole = text[: text.rfind(b"\n") + 1]
                    if len(whole) < len(text):
                        f.truncate(len(whole))
                self.entries = [json.loads(line) for line in whole.splitlines()]

    def append(self, batch: pa.RecordBatch, meta: dict) -> None:
        """Stores `batch` with its topic/partition/start/end; returns once it is fsynced."""
        with self.lock:
            data = os.path.join(self.folder, DATA_FILE)
            if self.schema is None:
                # The schema goes in by rename, so a crash never leaves a torn one behind.
                os.makedirs(self.folder, exist_ok=True)
                _append_durably(data + ".tmp", batch.schema.serialize().to_pybytes())
                os.replace(data + ".tmp", data)
                _fsync_dir(self.folder)
                _fsync_dir(os.path.dirname(self.folder))
                self.schema = batch.schema
            elif not batch.schema.equals(self.schema):
                raise ValueError(
                    f"batch schema {batch.schema} differs from the dataset's {self.schema}"
                )
            message = batch.serialize().to_pybytes()
            position = _append_durably(data, message)
            entry = {
                "topic": meta.get("topic"),
                "partition": meta.get("partition"),
                "start": meta.get("start"),
                "end": meta.get("end"),
                "rows": batch.num_rows,
                "position": position,
                "length": len(message),
            }
            line = json.dumps(entry, separators=(",", ":")) + "\n"
            _append_durably(os.path.join(self.folder, INDEX_FILE), line.encode())
            self.entries.append(entry)

    def window(self, topic=None, partition=None, start=None, end=None):
        """(batch, metadata) of the stored batches of that topic/partition whose [start,end)
        overlaps [start,end); a filter left as None matches every batch."""
        with self.lock:
            entries = list(self.entries)
        if not entries:
            return
        with open(os.path.join(self.folder, DATA_FILE), "rb") as f:
            for e in entries:
                if topic is not None and e["topic"] != topic:
                    continue
                if partition is not None and e["partition"] != partition:
                    continue
                if start is not None and not (e["end"] is not None and e["end"] > start):
                    continue
                if end is not None and not (e["start"] is not None and e["start"] < end):
                    continue
                f.seek(e["position"])
                message = pa.ipc.read_message(pa.py_buffer(f.read(e["length"])))
                batch = pa.ipc.read_record_batch(message, self.schema)
                meta = {k: e[k] for k in ("topic", "partition", "start", "end")}
                yield batch, meta

    def total_rows(self) -> int:
        with self.lock:
            return sum(e["rows"] for e in self.entries)


class Datasets:
    """Every dataset under the data dir, including those stored before a restart."""

    def __init__(self, data_dir: str):
        self.data_dir = data_dir
        os.makedirs(data_dir, exist_ok=True)
        self._lock = threading.Lock()
        self._by_name = {}
        for folder in sorted(os.listdir(data_dir)):
            name = urllib.parse.unquote(folder)
            self._by_name[name] = Dataset(os.path.join(data_dir, folder))

    def _folder(self, name: str) -> str:
        # Percent-encoding every "/" and "." keeps a name inside the data dir.
        return os.path.join(self.data_dir, urllib.parse.quote(name, safe="").replace(".", "%2E"))

    def get(self, name: str, create: bool = False):
        with self._lock:
            dataset = self._by_name.get(name)
            if dataset is None and create:
                dataset = self._by_name[name] = Dataset(self._folder(name))
            return dataset

    def drop(self, name: str) -> bool:
        with self._lock:
            dataset = self._by_name.pop(name, None)
        if dataset is None:
            return False
        with dataset.lock:
            shutil.rmtree(dataset.folder, ignore_errors=True)
        return True

    def names(self):
        with self._lock:
            return sorted(self._by_name)

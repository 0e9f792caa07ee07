"""The Arrow Flight test server of thalweg's integration tests (pyarrow's own Flight server).

Implements the conventions of issue 20 that our Flight client, source and sink
are held to:

  DoPut      descriptor PATH [<dataset>]; each batch's app_metadata is
             {"seq","topic","partition","start","end"}; the batch is appended
             to the dataset's files and fsynced, and only then is its
             PutResult {"seq":n} sent (datasets.py, put_acks.py).
  DoGet      {"dataset","topic","partition","from","to"}: the stored batches
             whose [start,end) overlaps [from,to), each labelled with its
             stored topic/partition/start/end (a filter left out matches all);
             {"stream":<name>,"from":n}: a live stream (live_streams.py).
  DoAction   configure {"dataset","ack_delay_ms","fail_after","reorder"}: faults
             for that dataset's DoPuts. fail_after fires once: the first DoPut
             to receive batch fail_after+1 sends the acks it owes, stores
             nothing more and is aborted with INTERNAL;
             generate {"stream","rows","batch_rows","payload_bytes",...};
             drop {"dataset"} (or {"stream"}) forgets it.
             Each answers one result, JSON {"ok":true,...}.
  ListFlights / GetFlightInfo: the datasets, with their schema and row count.

  python serve.py --data-dir DIR [--host 127.0.0.1] [--port 0]

prints the bound port as its first stdout line (so --port 0 works for a test
that spawns its own server), then serves until killed.
"""

import argparse
import json
import sys
import threading

import pyarrow as pa
import pyarrow.flight as flight

from datasets import Datasets
from live_streams import LiveStreams
from put_acks import AckSender

ACTIONS = {
    "configure": "fault injection for a dataset's DoPuts: ack_delay_ms, fail_after, reorder",
    "generate": "create a live stream of generated rows: stream, rows, batch_rows, payload_bytes",
    "drop": "forget a dataset (or a live stream)",
}


def _json(raw, what: str) -> dict:
    try:
        value = json.loads(bytes(raw).decode("utf-8")) if raw is not None else {}
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"{what} is not UTF-8 JSON: {e}") from e
    if not isinstance(value, dict):
        raise ValueError(f"{what} must be a JSON object")
    return value


def _dataset_name(descriptor: flight.FlightDescriptor) -> str:
    if descriptor.descriptor_type != flight.DescriptorType.PATH or len(descriptor.path) != 1:
        raise ValueError("a dataset is named by a PATH descriptor with one element")
    return descriptor.path[0].decode("utf-8")


class TestFlightServer(flight.FlightServerBase):
    def __init__(self, location: str, data_dir: str):
        super().__init__(location)
        self.datasets = Datasets(data_dir)
        self.streams = LiveStreams()
        self._faults = {}  # dataset -> configure body
        self._faults_lock = threading.Lock()

    # -- DoPut: the Flight sink's peer ------------------------------------

    def _take_faults(self, name: str):
        """(ack_delay_ms, reorder, fail_after) for a new DoPut; a fail_after is used up by it."""
        with self._faults_lock:
            faults = self._faults.get(name, {})
            fail_after = faults.pop("fail_after", None)
            return faults.get("ack_delay_ms", 0), faults.get("reorder", False), fail_after

    def do_put(self, context, descriptor, reader, writer):
        name = _dataset_name(descriptor)
        dataset = self.datasets.get(name, create=True)
        ack_delay_ms, reorder, fail_after = self._take_faults(name)
        acks = AckSender(writer, ack_delay_ms, reorder)
        received = 0
        try:
            while True:
                try:
                    chunk = reader.read_chunk()
                except StopIteration:
                    break
                if chunk.data is None:
                    continue
                received += 1
                if fail_after is not None and received > fail_after:
                    acks.finish()
                    raise flight.FlightInternalError(
                        f"injected failure after {fail_after} batches (configure fail_after)"
                    )
                meta = _json(chunk.app_metadata, "a DoPut batch's app_metadata")
                dataset.append(chunk.data, meta)
                acks.durable(int(meta.get("seq", received)))
        finally:
            acks.finish()
        if acks.error is not None:
            raise flight.FlightInternalError(f"sending a PutResult failed: {acks.error}")

    # -- DoGet: read-back by window, and live streams -----------------------

    def do_get(self, context, ticket):
        spec = _json(ticket.ticket, "the ticket")
        if "stream" in spec:
            stream = self.streams.get(spec["stream"])
            if stream is None:
                raise KeyError(f"no live stream named {spec['stream']!r} (DoAction generate)")
            return stream.read(spec)
        dataset = self.datasets.get(spec.get("dataset"))
        if dataset is None:
            raise KeyError(f"no dataset named {spec.get('dataset')!r}")
        window = dataset.window(spec.get("topic"), spec.get("partition"), spec.get("from"), spec.get("to"))
        schema = dataset.schema if dataset.schema is not None else pa.schema([])

        def labelled():
            for batch, meta in window:
                yield batch, pa.py_buffer(json.dumps(meta, separators=(",", ":")).encode())

        return flight.GeneratorStream(schema, labelled())

    # -- DoAction -------------------------------------------------------------

    def list_actions(self, context):
        return list(ACTIONS.items())

    def do_action(self, context, action):
        body = _json(action.body, f"the body of action {action.type!r}")
        if action.type == "configure":
            name = body.get("dataset")
            if not isinstance(name, str):
                raise ValueError('configure: "dataset" must be a string')
            with self._faults_lock:
                self._faults[name] = {
                    "ack_delay_ms": body.get("ack_delay_ms") or 0,
                    "fail_after": body.get("fail_after"),
                    "reorder": bool(body.get("reorder", False)),
                }
            result = {"ok": True, "dataset": name}
        elif action.type == "generate":
            self.streams.generate(body)
            result = {"ok": True, "stream": body["stream"]}
        elif action.type == "drop":
            found = False
            if "dataset" in body:
                found = self.datasets.drop(body["dataset"])
                with self._faults_lock:
                    self._faults.pop(body["dataset"], None)
            if "stream" in body:
                found = self.streams.drop(body["stream"]) or found
            result = {"ok": True, "found": found}
        else:
            raise ValueError(f"unknown action {action.type!r}; known: {sorted(ACTIONS)}")
        return [json.dumps(result).encode()]

    # -- ListFlights / GetFlightInfo -----------------------------------------

    def _info(self, name: str):
        dataset = self.datasets.get(name)
        if dataset is None:
            raise KeyError(f"no dataset named {name!r}")
        descriptor = flight.FlightDescriptor.for_path(name)
        ticket = flight.Ticket(json.dumps({"dataset": name}).encode())
        schema = dataset.schema if dataset.schema is not None else pa.schema([])
        return flight.FlightInfo(schema, descriptor, [flight.FlightEndpoint(ticket, [])], dataset.total_rows(), -1)

    def list_flights(self, context, criteria):
        for name in self.datasets.names():
            yield self._info(name)

    def get_flight_info(self, context, descriptor):
        return self._info(_dataset_name(descriptor))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", required=True, help="where datasets are stored")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    args = parser.parse_args()
    server = TestFlightServer(f"grpc://{args.host}:{args.port}", args.data_dir)
    print(server.port, flush=True)
    print(f"flight: serving grpc://{args.host}:{server.port}, data in {args.data_dir}", file=sys.stderr, flush=True)
    server.serve()


if __name__ == "__main__":
    main()

"""Reads a dataset or a live stream with pyarrow's own Flight client and prints what it saw.

  python read_back.py DATASET_OR_TICKET_JSON --url grpc://127.0.0.1:PORT

The argument is a dataset name (every stored batch is read) or a DoGet ticket
as JSON (starting with "{", e.g. {"stream":"s1","from":0} or a window
{"dataset":"d","topic":"t","partition":0,"from":0,"to":100}). Prints one JSON
line {"rows":n,"batches":k,"sha256":"<hex>"}, so a TypeScript test can compare
what Arrow's implementation reads with what our client reads.

The hash is SHA-256 over, for each column in schema order, the line
"<column name>\n" and then one line per value in row order: `null` for a
null; integers, and timestamps/dates/times/durations as their stored
integers, in decimal; booleans as true/false; floats as JSON numbers
(Python repr); strings as JSON strings (non-ASCII characters unescaped, as
JSON.stringify writes them); binary as lowercase hex. Only flat columns are
hashed; a nested column fails the read.
"""

import argparse
import hashlib
import json

import pyarrow as pa
import pyarrow.flight as flight


def value_lines(column: pa.ChunkedArray):
    t = column.type
    if pa.types.is_timestamp(t) or pa.types.is_date(t) or pa.types.is_time(t) or pa.types.is_duration(t):
        column = column.cast(pa.int64())
    elif pa.types.is_nested(t):
        raise SystemExit(f"read_back: column of type {t} is not hashed (flat columns only)")
    for value in column.to_pylist():
        if value is None:
            yield "null"
        elif isinstance(value, bool):
            yield "true" if value else "false"
        elif isinstance(value, int):
            yield str(value)
        elif isinstance(value, float):
            yield json.dumps(value)
        elif isinstance(value, str):
            yield json.dumps(value, ensure_ascii=False)
        elif isinstance(value, bytes):
            yield value.hex()
        else:
            raise SystemExit(f"read_back: no hash encoding for {type(value).__name__} values")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("target", metavar="DATASET_OR_TICKET_JSON")
    parser.add_argument("--url", required=True, help="grpc://host:port of the Flight server")
    args = parser.parse_args()
    ticket = args.target if args.target.lstrip().startswith("{") else json.dumps({"dataset": args.target})

    reader = flight.connect(args.url).do_get(flight.Ticket(ticket.encode()))
    batches = []
    while True:
        try:
            chunk = reader.read_chunk()
        except StopIteration:
            break
        if chunk.data is not None:
            batches.append(chunk.data)
    table = pa.Table.from_batches(batches, schema=reader.schema)

    digest = hashlib.sha256()
    for name, column in zip(table.column_names, table.columns):
        digest.update((name + "\n").encode())
        for line in value_lines(column):
            digest.update((line + "\n").encode())
    print(json.dumps({"rows": table.num_rows, "batches": len(batches), "sha256": digest.hexdigest()}, separators=(",", ":")))


if __name__ == "__main__":
    main()

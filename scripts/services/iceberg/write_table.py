"""Writes rows to an Iceberg table through the REST catalog, with pyiceberg:
the reference writer the tests compare ours with, and the way a test makes a
table for our reader.

    python write_table.py SPEC.json     (or `-`, or nothing: the spec on stdin)

The spec is one JSON object:

    {"namespace": "ns",               (or ["a", "b"] for a nested one)
     "table": "events",
     "schema": [{"name": "id", "type": "long", "required": true},
                {"name": "name", "type": "string"}],
     "rows": [{"id": 1, "name": "a"}, ...]}

Instead of "rows", "ipc": [PATH, ...] appends the rows of Arrow IPC stream
files (what a writer such as the fake Zerobus server was sent), all in one
snapshot, with their own schema (no "schema" then).

Instead of "rows", "generate" makes many rows without a huge spec (a bench
writes 500,000 this way): {"count": N, "columns": {NAME: GENERATOR}}, where
an int or long column's generator is {"from": A, "every": K, "modulo": M}
(row i holds (A + i // K) % M; every defaults to 1, no modulo when absent)
and a string column's is {"template": "value-{i}"}.

With "delete": "EXPR" (a pyiceberg filter expression) and no rows, the
table's rows matching EXPR are deleted instead (copy-on-write: the files
holding them are rewritten, the old ones recorded as DELETED in a new
snapshot).

Types: boolean, int, long, float, double, string, date ("2024-01-31"),
timestamp and timestamptz (ISO 8601, microseconds), binary (base64).
The namespace and the table are created when missing (an existing table
gets the rows appended, as a new snapshot). Data files are Parquet, zstd.
Prints one JSON line: the table, its metadata location, the new snapshot's
id (a decimal string: ids are 64-bit, beyond what a JavaScript number holds
exactly), and each data file of the snapshot with its row count and the
codecs its Parquet footer names.
"""

import base64
import datetime
import json
import sys

import pyarrow as pa
import pyarrow.parquet as pq

import catalog

ARROW_TYPES = {
    "boolean": pa.bool_(),
    "int": pa.int32(),
    "long": pa.int64(),
    "float": pa.float32(),
    "double": pa.float64(),
    "string": pa.string(),
    "date": pa.date32(),
    "timestamp": pa.timestamp("us"),
    "timestamptz": pa.timestamp("us", tz="UTC"),
    "binary": pa.binary(),
}

PARSE = {
    "date": datetime.date.fromisoformat,
    "timestamp": datetime.datetime.fromisoformat,
    "timestamptz": datetime.datetime.fromisoformat,
    "binary": base64.b64decode,
}


def read_spec(argv):
    if len(argv) > 2:
        sys.exit("usage: write_table.py [SPEC.json | -]")
    if len(argv) == 1 or argv[1] == "-":
        return json.load(sys.stdin)
    with open(argv[1], encoding="utf-8") as f:
        return json.load(f)


def arrow_table(columns, rows):
    fields, arrays = [], []
    for column in columns:
        name, kind = column["name"], column["type"]
        if kind not in ARROW_TYPES:
            sys.exit(f"column {name}: unknown type {kind!r} (one of {', '.join(ARROW_TYPES)})")
        parse = PARSE.get(kind, lambda v: v)
        values = [None if row.get(name) is None else parse(row[name]) for row in rows]
        fields.append(pa.field(name, ARROW_TYPES[kind], nullable=not column.get("required", False)))
        arrays.append(pa.array(values, type=ARROW_TYPES[kind]))
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


def ipc_table(paths):
    """The rows of Arrow IPC stream files, one table (their schemas must agree)."""
    tables = []
    for path in paths:
        with pa.OSFile(path, "rb") as f:
            tables.append(pa.ipc.open_stream(f).read_all())
    if not tables:
        sys.exit("'ipc' names no file")
    return pa.concat_tables(tables)


def generated_table(columns, generate):
    """The rows of a "generate" spec, built column by column with pyarrow.compute."""
    import pyarrow.compute as pc

    count = generate["count"]
    index = pa.array(range(count), type=pa.int64())
    fields, arrays = [], []
    for column in columns:
        name, kind = column["name"], column["type"]
        rule = generate["columns"].get(name)
        if rule is None:
            sys.exit(f"column {name}: no generator in 'generate'")
        if kind in ("int", "long"):
            values = pc.add(pc.divide(index, rule.get("every", 1)), rule.get("from", 0))
            if "modulo" in rule:
                values = pc.subtract(values, pc.multiply(pc.divide(values, rule["modulo"]), rule["modulo"]))
            array = values.cast(ARROW_TYPES[kind])
        elif kind == "string" and "template" in rule:
            array = pa.array([rule["template"].format(i=i) for i in range(count)], type=pa.string())
        else:
            sys.exit(f"column {name}: no generator for type {kind!r}")
        fields.append(pa.field(name, ARROW_TYPES[kind], nullable=not column.get("required", False)))
        arrays.append(array)
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


def data_files(table, io_fs):
    """The snapshot's data files, each with the codec its Parquet footer names."""
    files = []
    for task in table.scan().plan_files():
        path = task.file.file_path
        meta = pq.ParquetFile(io_fs.open_input_file(path.split("://", 1)[1])).metadata
        codecs = {meta.row_group(g).column(c).compression for g in range(meta.num_row_groups)
                  for c in range(meta.num_columns)}
        files.append({"path": path, "records": task.file.record_count, "codecs": sorted(codecs)})
    return files


def main():
    spec = read_spec(sys.argv)
    namespace = spec["namespace"]
    namespace = tuple(namespace) if isinstance(namespace, list) else (namespace,)
    identifier = (*namespace, spec["table"])
    if "delete" in spec:
        cat = catalog.load()
        table = cat.load_table(identifier)
        table.delete(spec["delete"])
        return report(cat, identifier)
    if "ipc" in spec:
        data = ipc_table(spec["ipc"])
    elif "generate" in spec:
        data = generated_table(spec["schema"], spec["generate"])
    else:
        data = arrow_table(spec["schema"], spec["rows"])

    cat = catalog.load()
    cat.create_namespace_if_not_exists(namespace)
    table = cat.create_table_if_not_exists(
        identifier,
        schema=data.schema,
        properties={"write.parquet.compression-codec": "zstd"},
    )
    table.append(data)
    return report(cat, identifier)


def report(cat, identifier):
    """Prints the one JSON line: the table, its metadata, its current snapshot and data files."""
    table = cat.load_table(identifier)
    snapshot = table.current_snapshot()
    print(json.dumps({
        "table": ".".join(identifier),
        "metadata_location": table.metadata_location,
        "snapshot_id": str(snapshot.snapshot_id),
        "data_files": data_files(table, catalog.s3_filesystem()),
    }))


if __name__ == "__main__":
    main()

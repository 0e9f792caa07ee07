"""The generated rows every Flight peer serves: one schema, values derived from the row id.

A live stream of the test server (DoAction `generate`) and ipc_producer.py
both produce these rows, so a test can check what it read against a second
generation of the same ids without storing anything.
"""

import pyarrow as pa

SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("payload", pa.utf8(), nullable=False),
        pa.field("ts", pa.timestamp("ms", tz="UTC"), nullable=False),
    ]
)

# 2023-11-14T22:13:20Z: row `id` is stamped BASE_TS_MS + id.
BASE_TS_MS = 1_700_000_000_000


def payload_of(row_id: int, payload_bytes: int = 0) -> str:
    """`row-<id>`, or when payload_bytes > 0 that text repeated and cut to exactly that many bytes."""
    text = f"row-{row_id}"
    if payload_bytes <= 0:
        return text
    unit = text + ";"
    return (unit * (payload_bytes // len(unit) + 1))[:payload_bytes]


def batch_of(first: int, count: int, payload_bytes: int = 0) -> pa.RecordBatch:
    """Rows first .. first+count-1 as one record batch of SCHEMA."""
    return batch_with_payloads(first, [payload_of(i, payload_bytes) for i in range(first, first + count)])


def batch_with_payloads(first: int, payloads: list) -> pa.RecordBatch:
    """Rows first .. first+len(payloads)-1 of SCHEMA whose payloads are given, not derived."""
    ids = list(range(first, first + len(payloads)))
    return pa.record_batch(
        [
            pa.array(ids, pa.int64()),
            pa.array(payloads, pa.utf8()),
            pa.array([BASE_TS_MS + i for i in ids], pa.timestamp("ms", tz="UTC")),
        ],
        schema=SCHEMA,
    )


def batch_starts(rows: int, batch_rows: int) -> range:
    """Row offsets at which the batches of a `rows`-row stream cut into `batch_rows` start."""
    if batch_rows <= 0:
        raise ValueError("batch_rows must be positive")
    return range(0, rows, batch_rows)


def boundary_at_or_below(offset: int, batch_rows: int) -> int:
    """The first row of the batch holding row `offset`: where a resumed stream restarts."""
    return offset - offset % batch_rows

"""Prints an Iceberg table's rows as JSON lines, read with pyiceberg through
the REST catalog: how a test checks what our writer committed.

    python read_table.py NAMESPACE.TABLE [--snapshot-id ID] [--sort-by COLUMN]
                         [--row-filter EXPR]

Without --snapshot-id, the current snapshot. --row-filter is a pyiceberg
filter expression, e.g. "p = 1 and o >= 5 and o < 22". Rows come in scan order unless
--sort-by names a column. Values as JSON: dates and timestamps in ISO 8601,
binary in base64, decimals as strings.
"""

import argparse
import base64
import datetime
import decimal
import json

import catalog


def plain(value):
    if isinstance(value, (datetime.date, datetime.datetime, datetime.time)):
        return value.isoformat()
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, decimal.Decimal):
        return str(value)
    raise TypeError(f"no JSON form for {type(value).__name__}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("table", help="NAMESPACE.TABLE (dots separate nested namespaces)")
    parser.add_argument("--snapshot-id", type=int)
    parser.add_argument("--sort-by")
    parser.add_argument("--row-filter", default="True")
    args = parser.parse_args()

    table = catalog.load().load_table(args.table)
    rows = table.scan(row_filter=args.row_filter, snapshot_id=args.snapshot_id).to_arrow().to_pylist()
    if args.sort_by:
        rows.sort(key=lambda row: (row[args.sort_by] is None, row[args.sort_by]))
    for row in rows:
        print(json.dumps(row, default=plain))


if __name__ == "__main__":
    main()

"""The bench's baseline: pyiceberg scanning one offset window of a table,
timed inside Python so interpreter start and imports are not counted.

    python pyiceberg_scan.py SCRIPTS_DIR NAMESPACE.TABLE PARTITION START END ROUNDS

SCRIPTS_DIR is scripts/services/iceberg (for catalog.py). Each round loads
the table from the catalog and reads the window to an Arrow table, as our
scanWindow loads and reads. Prints one JSON line: the window's records and
the best round's seconds.
"""

import json
import sys
import time


def main():
    scripts, table_name, partition, start, end, rounds = sys.argv[1:7]
    sys.path.insert(0, scripts)
    import catalog
    from pyiceberg.expressions import And, EqualTo, GreaterThanOrEqual, LessThan

    cat = catalog.load()
    row_filter = And(
        EqualTo("partition", int(partition)),
        GreaterThanOrEqual("offset", int(start)),
        LessThan("offset", int(end)),
    )
    best, records = None, None
    for _ in range(int(rounds)):
        began = time.perf_counter()
        table = cat.load_table(table_name)
        records = table.scan(row_filter=row_filter).to_arrow().num_rows
        took = time.perf_counter() - began
        best = took if best is None else min(best, took)
    print(json.dumps({"records": records, "seconds": best}))


if __name__ == "__main__":
    main()

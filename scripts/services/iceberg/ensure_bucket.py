"""Creates the warehouse bucket of scripts/services/iceberg.sh if it is missing.

    python ensure_bucket.py BUCKET

Prints `created` or `exists` on stdout (iceberg.sh starts the catalog with
an empty store when the bucket had to be created: tables it listed before
would point at files that are gone). Exits 1 with the S3 error otherwise.
"""

import sys

from pyarrow import fs

from catalog import s3_filesystem


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: ensure_bucket.py BUCKET")
    bucket = sys.argv[1]
    s3 = s3_filesystem()
    if s3.get_file_info(bucket).type == fs.FileType.Directory:
        print("exists")
        return
    s3.create_dir(bucket)
    if s3.get_file_info(bucket).type != fs.FileType.Directory:
        sys.exit(f"created bucket {bucket}, but S3 does not list it")
    print("created")


if __name__ == "__main__":
    main()

"""What write_table.py, read_table.py and ensure_bucket.py share: the REST
catalog and the S3 file system, both configured from the THALWEG_* variables
that `bash scripts/services/iceberg.sh up` and `s3.sh up` print.

The data files are read and written by pyarrow's S3 file system with the
S3 settings given here, not with credentials the catalog might vend: the
catalog server is only the REST catalog, as a real one would be.
"""

import os
import sys

S3_VARIABLES = (
    "THALWEG_S3_ENDPOINT",
    "THALWEG_S3_REGION",
    "THALWEG_S3_ACCESS_KEY",
    "THALWEG_S3_SECRET_KEY",
)


def required(variable):
    """The value of an environment variable; exits 2 naming it if unset."""
    value = os.environ.get(variable, "")
    if value == "":
        sys.exit(f"{variable} is not set (run eval \"$(pnpm services:up)\" first)")
    return value


def s3_properties():
    """pyiceberg's S3 file IO properties: path-style requests to the test S3."""
    endpoint, region, access_key, secret_key = (required(v) for v in S3_VARIABLES)
    return {
        "s3.endpoint": endpoint,
        "s3.region": region,
        "s3.access-key-id": access_key,
        "s3.secret-access-key": secret_key,
        "s3.force-virtual-addressing": "false",
        "py-io-impl": "pyiceberg.io.pyarrow.PyArrowFileIO",
    }


def load(uri=None):
    """The REST catalog at `uri` (default THALWEG_ICEBERG_URL)."""
    from pyiceberg.catalog import load_catalog

    return load_catalog(
        "thalweg",
        **{"type": "rest", "uri": uri or required("THALWEG_ICEBERG_URL"), **s3_properties()},
    )


def s3_filesystem():
    """pyarrow's S3 file system on the test S3 (path-style addressing); it
    may create buckets (ensure_bucket.py makes the warehouse's)."""
    from urllib.parse import urlparse

    from pyarrow import fs

    endpoint, region, access_key, secret_key = (required(v) for v in S3_VARIABLES)
    parsed = urlparse(endpoint)
    return fs.S3FileSystem(
        access_key=access_key,
        secret_key=secret_key,
        region=region,
        scheme=parsed.scheme or "http",
        endpoint_override=parsed.netloc or endpoint,
        force_virtual_addressing=False,
        allow_bucket_creation=True,
    )

import { ThalwegError, type ErrorClass } from '@thalweg/connector-core';

export const ICEBERG_ERROR_CODES = [
  /** An argument passed to a call is malformed; the message names it. */
  'TWG_ICEBERG_INVALID',
  /** The catalog did not answer, or answered 5xx: nothing is known to be wrong with the table. */
  'TWG_ICEBERG_CATALOG_UNAVAILABLE',
  /** The catalog refused the request (4xx other than a missing table); its message is kept. */
  'TWG_ICEBERG_CATALOG_REFUSED',
  /** The catalog has no such table (or namespace); the message names it. */
  'TWG_ICEBERG_TABLE_NOT_FOUND',
  /** The table metadata does not parse, or names a snapshot or schema it does not hold. */
  'TWG_ICEBERG_METADATA_INVALID',
  /** The table uses something this reader refuses rather than misreads (a delete file, ORC, format v3...). */
  'TWG_ICEBERG_UNSUPPORTED',
  /** An Avro manifest or manifest list does not decode; the message names the file and byte offset. */
  'TWG_ICEBERG_AVRO_CORRUPT',
  /** A data or manifest file could not be fetched from its store. */
  'TWG_ICEBERG_FILE_UNREADABLE',
  /** A Parquet data file does not decode, or lacks a column the scan needs. */
  'TWG_ICEBERG_PARQUET_CORRUPT',
] as const;

export type IcebergErrorCode = (typeof ICEBERG_ERROR_CODES)[number];

const CLASS_OF: Record<IcebergErrorCode, ErrorClass> = {
  TWG_ICEBERG_INVALID: 'fatal-config',
  TWG_ICEBERG_CATALOG_UNAVAILABLE: 'transient',
  TWG_ICEBERG_CATALOG_REFUSED: 'fatal-config',
  TWG_ICEBERG_TABLE_NOT_FOUND: 'fatal-config',
  TWG_ICEBERG_METADATA_INVALID: 'fatal-config',
  TWG_ICEBERG_UNSUPPORTED: 'fatal-config',
  TWG_ICEBERG_AVRO_CORRUPT: 'fatal-config',
  TWG_ICEBERG_FILE_UNREADABLE: 'transient',
  TWG_ICEBERG_PARQUET_CORRUPT: 'fatal-config',
};

/**
 * Every failure of the Iceberg read path. `subject` names what it is about:
 * the table (`ns.table`), the file path, or the argument.
 */
export class IcebergError extends ThalwegError<IcebergErrorCode> {
  /** The table, file or argument the error is about. */
  readonly subject: string;
  /** The catalog's HTTP status, for the catalog codes. */
  readonly status: number | undefined;

  constructor(
    code: IcebergErrorCode,
    subject: string,
    message: string,
    options: { cause?: unknown; status?: number } = {},
  ) {
    super({
      code,
      errorClass: CLASS_OF[code],
      message: `${subject}: ${message}`,
      cause: options.cause,
    });
    this.subject = subject;
    this.status = options.status;
  }
}

/** A malformed argument: names it and says why. */
export function invalidArgument(field: string, reason: string): IcebergError {
  return new IcebergError('TWG_ICEBERG_INVALID', field, reason);
}

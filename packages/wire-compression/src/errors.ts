import { ThalwegError, type ErrorClass } from '@thalweg/connector-core';

export const WIRE_COMPRESSION_ERROR_CODES = [
  /** Bytes that are not a well-formed LZ4 frame; `offset` names where reading failed. */
  'TWG_LZ4_FRAME_INVALID',
  /** Bytes that are not a well-formed zstd frame. */
  'TWG_ZSTD_FRAME_INVALID',
  /** Decompressed output would exceed the caller's limit (or a declared length). */
  'TWG_DECOMPRESS_LIMIT',
  /** An Arrow IPC stream whose framing or metadata cannot be read; `offset` names where. */
  'TWG_IPC_STREAM_INVALID',
  /** An Arrow IPC body compression codec or method this package does not implement. */
  'TWG_IPC_CODEC_UNSUPPORTED',
] as const;

export type WireCompressionErrorCode = (typeof WIRE_COMPRESSION_ERROR_CODES)[number];

/**
 * Malformed bytes never become well-formed on a retry or a rebuilt stream,
 * so they are `poison` (route the input to quarantine). A limit is the
 * operator's choice: `fatal-config`, raise it if the input is legitimate.
 */
const CLASS_OF: Record<WireCompressionErrorCode, ErrorClass> = {
  TWG_LZ4_FRAME_INVALID: 'poison',
  TWG_ZSTD_FRAME_INVALID: 'poison',
  TWG_DECOMPRESS_LIMIT: 'fatal-config',
  TWG_IPC_STREAM_INVALID: 'poison',
  TWG_IPC_CODEC_UNSUPPORTED: 'poison',
};

/** Every failure of this package. `offset` is a byte offset into the input, when known. */
export class WireCompressionError extends ThalwegError<WireCompressionErrorCode> {
  readonly offset: number | undefined;

  constructor(code: WireCompressionErrorCode, message: string, offset?: number, cause?: unknown) {
    super({
      code,
      errorClass: CLASS_OF[code],
      message: offset === undefined ? message : `at byte ${offset}: ${message}`,
      cause,
    });
    this.offset = offset;
  }
}

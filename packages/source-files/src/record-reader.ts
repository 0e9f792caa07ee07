/** A record as a reader produces it; the source gives it an offset and headers. */
export interface FileRecord {
  readonly value: Uint8Array;
  readonly timestamp: number;
}

/** `take` has nothing buffered: `fill` must read before it can go on. */
export const NEED_READ = Symbol('need-read');
/** `take` reached the end of the file. */
export const END_OF_FILE = Symbol('end-of-file');

/**
 * Reads the records of one file. `take` is synchronous so the hot loop pays
 * for a promise per read, not per record; a read that fails leaves the
 * reader as it was, so calling `fill` again after a refused read loses and
 * repeats nothing.
 */
export interface FileRecordReader {
  take(): FileRecord | typeof NEED_READ | typeof END_OF_FILE;
  fill(): Promise<void>;
  /**
   * The cursor position of the next record not yet taken: where a fresh
   * reader resumes to produce exactly the records this one has not.
   */
  readonly nextPosition: number;
  /** The largest buffer this reader has held, in bytes. */
  readonly maxBufferBytes: number;
  /** Bytes read from the file so far. */
  readonly bytesRead: number;
}

/** Counters of a `FileSetSource`, for health reports and for tests that prove bounded memory. */
export interface FileSetSourceStats {
  /** Files of the set. */
  readonly files: number;
  /** Files read to their end. */
  readonly filesDone: number;
  /** Bytes read from files, headers and skipped regions included. */
  readonly bytesRead: number;
  /** Records yielded. */
  readonly records: number;
  /** Batches yielded. */
  readonly batches: number;
  /** Records above `maxRecordBytes`, each yielded alone in its own batch. */
  readonly oversizedRecords: number;
  /** The largest read buffer any reader held: the memory bound, proven rather than promised. */
  readonly maxBufferBytes: number;
  /** Batch boundaries remembered for `cursorAt`; dropped as cursors are asked for. */
  readonly pendingBoundaries: number;
}

/**
 * The position of a store-managed source, persisted by the offset store
 * because no broker holds it. Plain JSON data so any durable backend can hold
 * it; each variant is the natural position of one kind of origin.
 */
export type SourceCursor =
  | {
      /**
       * One log read by offset with no broker-held position (Kafka with
       * manual assignment): the next offset is the cursor.
       */
      readonly kind: 'log-offset';
      readonly nextOffset: number;
    }
  | {
      /** A set of files read in order: which file, and how far into it. */
      readonly kind: 'file-set';
      readonly files: readonly string[];
      readonly file: string;
      /** Byte position in `file` of the next record to read. */
      readonly position: number;
      /** Source offset of the next record (the log position across the set). */
      readonly nextOffset: number;
      /**
       * What was consumed of `files` up to and including `file` (one entry
       * each; `file`'s is `position` bytes): the size and a digest of that
       * prefix, so a resume refuses a file whose consumed bytes changed.
       * Absent in cursors written before it existed.
       */
      readonly consumed?: readonly { readonly size: number; readonly digest: string }[];
    }
  | {
      /** A table snapshot: its version and the files still to read. */
      readonly kind: 'table-version';
      readonly version: number;
      readonly pendingFiles: readonly string[];
      readonly nextOffset: number;
    }
  | {
      /**
       * A log whose position is a message id, not a number (a Pulsar
       * reader): the id of the last message durable in raw, in base64, from
       * which the reader resumes exclusively (ADR 0032); `nextOffset` is the
       * pipeline's position, `messageId`'s offset plus one or beyond.
       */
      readonly kind: 'message-id';
      readonly messageId: string;
      readonly nextOffset: number;
    }
  | {
      /** A producer-issued resumption token (Flight, IPC streams that resume). */
      readonly kind: 'stream-token';
      readonly token: string;
      readonly nextOffset: number;
    }
  | {
      /** A paged API: the opaque cursor or the timestamp watermark reached. */
      readonly kind: 'page';
      readonly cursor: string | null;
      readonly watermark: string | null;
      readonly nextOffset: number;
    };

export type SourceCursorKind = SourceCursor['kind'];

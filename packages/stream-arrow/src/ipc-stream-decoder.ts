import { MessageHeader, type RecordBatch, type Schema } from 'apache-arrow';
import { ArrowBatchError } from './errors.js';
import type { IpcBodyCodecs } from './ipc-body-compression.js';
import { decodeIpcSchema, decodeIpcStream } from './ipc-stream.js';
import {
  MESSAGE_PREFIX_BYTES,
  decodeMessageHeader,
  readMessagePrefix,
} from './ipc-message-scan.js';

export interface IpcStreamDecoderOptions {
  /** The most bytes one message (prefix, metadata, body) may declare; it is refused before it is buffered. */
  readonly maxMessageBytes: number;
  /** Codecs for compressed bodies (`ipcBodyCodecs` of @thalweg/wire-compression). */
  readonly codecs?: IpcBodyCodecs;
}

/** What `next` found in the bytes pushed so far. */
export type IpcStreamItem =
  | { readonly kind: 'schema'; readonly schema: Schema }
  | {
      readonly kind: 'batch';
      readonly batch: RecordBatch;
      /** Record batches before this one in the stream. */
      readonly index: number;
      /** The stream byte where the batch's message starts. */
      readonly offset: number;
    }
  /** The end-of-stream marker: nothing may follow. */
  | { readonly kind: 'end' }
  /** Every whole message pushed so far has been returned. */
  | { readonly kind: 'need-more' };

/**
 * An Arrow IPC stream read incrementally, as its bytes arrive from a socket
 * or a pipe, through the one checked reader (ADR 0021): each message's
 * prefix and metadata are checked by `readMessagePrefix` and
 * `decodeMessageHeader` before its body is buffered, and each record batch
 * is decoded behind the schema by `decodeIpcStream`, in full, before it is
 * returned. It holds at most one message beyond what `push` hands it, and
 * a message larger than `maxMessageBytes` is refused by its declared length.
 *
 * A refusal (`ArrowBatchError`) carries the stream byte in `offset` and
 * names the record batch it was reading; after one, the decoder refuses
 * everything (`next` throws it again): nothing after bad bytes is read.
 * Dictionary batches and a second schema are refused.
 */
export class IpcStreamDecoder {
  private chunks: Uint8Array[] = [];
  private queued = 0;
  /** Stream bytes consumed into returned messages. */
  private position = 0;
  private schemaBytes: Uint8Array | undefined;
  private batches = 0;
  private ended = false;
  private failure: ArrowBatchError | undefined;

  constructor(private readonly options: IpcStreamDecoderOptions) {}

  /** Stream bytes taken into messages so far (where the next message starts). */
  get offset(): number {
    return this.position;
  }

  /** Bytes pushed and not yet part of a returned message. */
  get buffered(): number {
    return this.queued;
  }

  /** Whether the end-of-stream marker was read. */
  get atEnd(): boolean {
    return this.ended;
  }

  /** Record batches returned so far. */
  get batchCount(): number {
    return this.batches;
  }

  push(chunk: Uint8Array): void {
    if (chunk.byteLength === 0) return;
    this.chunks.push(chunk);
    this.queued += chunk.byteLength;
  }

  next(): IpcStreamItem {
    if (this.failure !== undefined) throw this.failure;
    try {
      return this.step();
    } catch (cause) {
      this.failure =
        cause instanceof ArrowBatchError
          ? this.named(cause)
          : new ArrowBatchError(
              'TWG_ARROW_IPC_INVALID',
              String(cause),
              { offset: this.position },
              cause,
            );
      throw this.failure;
    }
  }

  /**
   * The stream's bytes ended (the connection closed): whether that was a
   * clean end. Bytes of a message left unread are a truncation, refused
   * with where the message starts; a stream may end without the marker at
   * a message boundary (the format makes it optional), which is reported
   * as `false` so the caller decides.
   */
  finish(): boolean {
    if (this.failure !== undefined) throw this.failure;
    if (this.queued > 0 && !this.ended) {
      this.failure = this.named(
        this.refusal(this.position, `the stream ends ${this.queued} bytes into a message`),
      );
      throw this.failure;
    }
    return this.ended;
  }

  private step(): IpcStreamItem {
    if (this.ended) {
      if (this.queued > 0) {
        throw this.refusal(this.position, `${this.queued} bytes after the end-of-stream marker`);
      }
      return { kind: 'end' };
    }
    const head = this.peek(Math.min(MESSAGE_PREFIX_BYTES, this.queued));
    if (head.byteLength < 4) return { kind: 'need-more' };
    const view = new DataView(head.buffer, head.byteOffset, head.byteLength);
    const first = view.getInt32(0, true);
    // An end marker is 4 bytes (before Arrow 0.15) or 8; its prefix is read as one message's would be.
    const endLength =
      first === 0 ? 4 : head.byteLength === 8 && view.getInt32(4, true) === 0 ? 8 : 0;
    if (first === -1 && head.byteLength < 8) return { kind: 'need-more' };
    const at = this.position;
    const prefix = readMessagePrefix(head, at, endLength > 0 ? endLength : Number.MAX_SAFE_INTEGER);
    if (prefix.kind === 'end') {
      this.consume(prefix.prefixLength);
      this.ended = true;
      if (this.schemaBytes === undefined)
        throw this.refusal(at, 'the stream ends before its schema');
      return this.step();
    }
    const metadataEnd = prefix.prefixLength + prefix.metadataLength;
    this.checkSize(metadataEnd, at);
    if (this.queued < metadataEnd) return { kind: 'need-more' };
    const withPrefix = this.peek(metadataEnd);
    const header = decodeMessageHeader(withPrefix.subarray(prefix.prefixLength), at);
    const total = metadataEnd + header.bodyLength;
    this.checkSize(total, at);
    if (this.queued < total) return { kind: 'need-more' };
    if (header.headerType === MessageHeader.Schema) {
      if (this.schemaBytes !== undefined) throw this.refusal(at, 'a second schema message');
      const bytes = this.take(total);
      const schema = translated(
        () => decodeIpcSchema(bytes),
        (o) => at + o,
      );
      this.schemaBytes = bytes;
      return { kind: 'schema', schema };
    }
    const schemaBytes = this.schemaBytes;
    if (schemaBytes === undefined)
      throw this.refusal(at, 'the stream does not start with a schema');
    if (header.headerType !== MessageHeader.RecordBatch) {
      throw new ArrowBatchError(
        'TWG_ARROW_IPC_UNSUPPORTED',
        `a dictionary batch (dictionary-encoded columns are not read)`,
        { offset: at },
      );
    }
    // The batch is decoded as a one-batch stream behind the schema, copied once into place.
    const bytes = new Uint8Array(schemaBytes.byteLength + total);
    bytes.set(schemaBytes, 0);
    this.takeInto(bytes.subarray(schemaBytes.byteLength), total);
    const index = this.batches;
    const schemaLength = schemaBytes.byteLength;
    const batch = translated(
      () =>
        decodeIpcStream(
          bytes,
          this.options.codecs === undefined
            ? {}
            : { codecs: this.options.codecs, maxDecompressedBytes: this.options.maxMessageBytes },
        ),
      (o) => (o >= schemaLength ? at + o - schemaLength : at),
    );
    this.batches += 1;
    return { kind: 'batch', batch, index, offset: at };
  }

  /** The refusal, naming the record batch it was reading (the count before it). */
  private named(cause: ArrowBatchError): ArrowBatchError {
    const at = cause.offset === undefined ? {} : { offset: cause.offset };
    const field = cause.field === undefined ? {} : { field: cause.field };
    const row = cause.row === undefined ? {} : { row: cause.row };
    return new ArrowBatchError(
      cause.code,
      `record batch ${this.batches}: ${cause.reason}`,
      { ...field, ...row, ...at },
      cause,
    );
  }

  private checkSize(length: number, at: number): void {
    if (length > this.options.maxMessageBytes) {
      throw new ArrowBatchError(
        'TWG_ARROW_IPC_TOO_LARGE',
        `a message of at least ${length} bytes is larger than maxMessageBytes (${this.options.maxMessageBytes})`,
        { offset: at },
      );
    }
  }

  private refusal(at: number, reason: string): ArrowBatchError {
    return new ArrowBatchError('TWG_ARROW_IPC_INVALID', reason, {
      offset: at,
    });
  }

  /** The first `n` queued bytes, without consuming them (joined only when they span chunks). */
  private peek(n: number): Uint8Array {
    const first = this.chunks[0];
    if (first !== undefined && first.byteLength >= n) return first.subarray(0, n);
    const out = new Uint8Array(n);
    let done = 0;
    for (const c of this.chunks) {
      if (done >= n) break;
      const part = c.subarray(0, n - done);
      out.set(part, done);
      done += part.byteLength;
    }
    return out;
  }

  private take(n: number): Uint8Array {
    const out = new Uint8Array(n);
    this.takeInto(out, n);
    return out;
  }

  private takeInto(into: Uint8Array, n: number): void {
    let done = 0;
    while (done < n) {
      const c = this.chunks[0];
      if (c === undefined) throw new Error('IpcStreamDecoder: fewer bytes queued than counted');
      const part = c.subarray(0, n - done);
      into.set(part, done);
      done += part.byteLength;
      if (part.byteLength === c.byteLength) this.chunks.shift();
      else this.chunks[0] = c.subarray(part.byteLength);
    }
    this.queued -= n;
    this.position += n;
  }

  private consume(n: number): void {
    this.takeInto(new Uint8Array(n), n);
  }
}

/** Runs a decode whose offsets are within its own bytes; refusals get stream offsets. */
function translated<T>(run: () => T, offset: (o: number) => number): T {
  try {
    return run();
  } catch (cause) {
    if (!(cause instanceof ArrowBatchError)) throw cause;
    const at = cause.offset === undefined ? {} : { offset: offset(cause.offset) };
    const field = cause.field === undefined ? {} : { field: cause.field };
    const row = cause.row === undefined ? {} : { row: cause.row };
    throw new ArrowBatchError(cause.code, cause.reason, { ...field, ...row, ...at }, cause);
  }
}

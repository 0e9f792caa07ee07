import { FileSourceError, readFailed } from './errors.js';
import { readFully, type OpenFile } from './file-access.js';
import { END_OF_FILE, NEED_READ, type FileRecord, type FileRecordReader } from './record-reader.js';

const LF = 0x0a;
const CR = 0x0d;

export interface NdjsonReaderOptions {
  readonly name: string;
  readonly size: number;
  readonly timestamp: number;
  readonly readChunkBytes: number;
  readonly maxBufferBytes: number;
}

/**
 * The lines of one NDJSON file, read in chunks into one buffer that holds
 * the unread rest of the last chunk and grows only while a single line is
 * longer than it, up to `maxBufferBytes`: memory is bounded by the longest
 * line, never by the file.
 *
 * What a record is, byte for byte:
 * - a line ending in `\n` is a record of its bytes before the `\n`, and
 *   before the `\r` of a `\r\n`;
 * - an empty line (`\n` or `\r\n` alone) is no record and takes no offset,
 *   so offsets count records, the same on every read of the same bytes;
 * - bytes after the last `\n` are one record, exactly as they are (a lone
 *   `\r` there is kept: it ends no line). A set is read only once complete,
 *   so this final line is a whole record, never a line still being written.
 * Nothing is decoded: invalid UTF-8 or JSON is passed on for the pipeline to
 * quarantine.
 */
export class NdjsonReader implements FileRecordReader {
  private buf: Buffer;
  /** File position of `buf[0]`. */
  private base: number;
  private start = 0;
  private end = 0;
  /** Where the next newline search starts: bytes before it hold none. */
  private scanFrom = 0;
  private eof: boolean;
  private maxHeld: number;
  private read = 0;

  constructor(
    private readonly file: OpenFile,
    private readonly options: NdjsonReaderOptions,
    startPosition: number,
  ) {
    this.base = startPosition;
    this.eof = startPosition >= options.size;
    this.buf = Buffer.allocUnsafe(Math.min(options.readChunkBytes, options.maxBufferBytes));
    this.maxHeld = this.buf.byteLength;
  }

  get nextPosition(): number {
    return this.base + this.start;
  }

  get maxBufferBytes(): number {
    return this.maxHeld;
  }

  get bytesRead(): number {
    return this.read;
  }

  take(): FileRecord | typeof NEED_READ | typeof END_OF_FILE {
    const buf = this.buf;
    for (;;) {
      // indexOf searches the whole buffer: a hit at or past `end` is a stale byte.
      const nl = buf.indexOf(LF, this.scanFrom);
      if (nl !== -1 && nl < this.end) {
        const from = this.start;
        const to = nl > from && buf[nl - 1] === CR ? nl - 1 : nl;
        this.start = nl + 1;
        this.scanFrom = this.start;
        if (to === from) continue;
        return { value: copy(buf, from, to), timestamp: this.options.timestamp };
      }
      this.scanFrom = this.end;
      if (!this.eof) return NEED_READ;
      if (this.start === this.end) return END_OF_FILE;
      const value = copy(buf, this.start, this.end);
      this.start = this.end;
      return { value, timestamp: this.options.timestamp };
    }
  }

  async fill(): Promise<void> {
    if (this.eof) return;
    const { name, size, readChunkBytes, maxBufferBytes } = this.options;
    if (this.start > 0) {
      // Only the partial line at the end is kept; compaction moves it to the front.
      this.buf.copyWithin(0, this.start, this.end);
      this.base += this.start;
      this.end -= this.start;
      this.scanFrom -= this.start;
      this.start = 0;
    }
    if (this.end === this.buf.byteLength) this.grow(name, maxBufferBytes, readChunkBytes);
    const at = this.base + this.end;
    const want = Math.min(this.buf.byteLength - this.end, readChunkBytes, size - at);
    let got: number;
    try {
      got = await readFully(this.file, this.buf, this.end, want, at);
    } catch (cause) {
      throw readFailed(name, `reading ${want} bytes at ${at}`, cause);
    }
    if (got < want) {
      throw new FileSourceError(
        'TWG_FILE_CHANGED',
        `ended after ${at + got} bytes, the set was opened with ${size}: files must not change while read`,
        { file: name, position: at + got },
      );
    }
    this.end += got;
    this.read += got;
    if (at + got >= size) this.eof = true;
  }

  /** The buffer is one partial line: double it, up to the limit. */
  private grow(name: string, maxBufferBytes: number, readChunkBytes: number): void {
    const capacity = Math.min(
      maxBufferBytes,
      Math.max(this.buf.byteLength * 2, this.end + readChunkBytes),
    );
    if (capacity <= this.end) {
      throw new FileSourceError(
        'TWG_FILE_RECORD_TOO_LARGE',
        `a line longer than maxBufferBytes (${maxBufferBytes}) starts here; raise maxBufferBytes to read it`,
        { file: name, position: this.base + this.start },
      );
    }
    const next = Buffer.allocUnsafe(capacity);
    this.buf.copy(next, 0, 0, this.end);
    this.buf = next;
    this.maxHeld = Math.max(this.maxHeld, capacity);
  }
}

/**
 * A record owns its bytes: the read buffer is reused, and a value may
 * outlive it. `allocUnsafe` is safe here (every byte is overwritten) and
 * takes small values from Node's shared pool, three times faster than
 * `Uint8Array.prototype.slice`.
 */
function copy(buf: Buffer, from: number, to: number): Uint8Array {
  const out = Buffer.allocUnsafe(to - from);
  buf.copy(out, 0, from, to);
  return out;
}

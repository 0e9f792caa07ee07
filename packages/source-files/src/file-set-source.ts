import {
  checkOffset,
  offsetSpan,
  samePartition,
  sourcePartition,
  type SourceBatch,
  type SourceCursor,
  type SourceHeaders,
  type SourcePartition,
  type SourceRecord,
  type StoreManagedSource,
} from '@thalweg/connector-core';
import { BoundaryLog, type FilePlace } from './boundary-log.js';
import { ConsumedPrefixes } from './consumed-prefix.js';
import { resumePoint } from './cursor-resume.js';
import { FileSourceError, readFailed } from './errors.js';
import type { OpenFile } from './file-access.js';
import { resolveFileSet, type FileEntry } from './file-set.js';
import { IpcReader } from './ipc-reader.js';
import { NdjsonReader } from './ndjson-reader.js';
import { PauseGate } from './pause-gate.js';
import { END_OF_FILE, NEED_READ, type FileRecord, type FileRecordReader } from './record-reader.js';
import {
  resolveOptions,
  type FileSetSourceOptions,
  type ResolvedOptions,
} from './source-options.js';
import type { FileSetSourceStats } from './source-stats.js';

/** The header every record carries: the name of the file it was read from. */
export const FILE_HEADER = 'twg.file';

interface OpenReader {
  readonly file: OpenFile;
  readonly entry: FileEntry;
  readonly reader: FileRecordReader;
  readonly headers: SourceHeaders;
}

/** A record taken from a reader but not yet in a batch, with where it starts. */
interface Carried {
  readonly record: FileRecord;
  readonly headers: SourceHeaders;
  readonly fileIndex: number;
  readonly position: number;
}

/**
 * A replayable, store-managed source over an ordered, fixed set of NDJSON
 * or Arrow IPC files, presented as one partition `{ topic, partition: 0 }`
 * whose offsets count records across the whole set: record i of the set has
 * offset i, so a file set read twice yields the same offsets and the same
 * record ids.
 *
 * Its cursor is `file-set`: the set's file names, the file of the next
 * record and its byte position there, the next offset, and the size and
 * digest of what was consumed of each file up to there (so a file that grew
 * is read on from where it stopped, and one whose consumed bytes changed is
 * refused on resume). A record taken
 * from a file is never lost: a batch cut short by an error or an abort is
 * finished by the next call to `batches()`.
 */
export class FileSetSource implements StoreManagedSource {
  readonly regime = 'store-managed' as const;
  readonly origin = { kind: 'replayable' } as const;
  readonly cluster: string;
  private readonly partition: SourcePartition;
  private readonly names: readonly string[];
  private readonly gate = new PauseGate();
  private readonly boundaries = new BoundaryLog();
  private readonly consumed: ConsumedPrefixes;

  /** Where the next reader opens. */
  private fileIndex = 0;
  private openAt = 0;
  private skipRows = 0;
  private nextOffset = 0;
  private reader: OpenReader | undefined;

  private building: SourceRecord[] = [];
  private buildingBytes = 0;
  private carried: Carried | undefined;
  /** A batch built while the consumer aborted: the next `batches()` yields it first. */
  private ready: SourceBatch | undefined;

  private started = false;
  private iterating = false;
  private closed = false;

  private filesDone = 0;
  private bytesDone = 0;
  private records = 0;
  private batchCount = 0;
  private oversized = 0;
  private maxBuffer = 0;

  private constructor(
    private readonly options: ResolvedOptions,
    private readonly files: readonly FileEntry[],
  ) {
    this.cluster = options.cluster;
    this.partition = sourcePartition(options.topic, 0);
    this.names = Object.freeze(files.map((f) => f.name));
    this.consumed = new ConsumedPrefixes(files);
    this.boundaries.reset(0, { fileIndex: 0, position: 0 });
  }

  /** Validates the options, lists and stats the set (its snapshot for the life of the source). */
  static async open(options: FileSetSourceOptions): Promise<FileSetSource> {
    const resolved = resolveOptions(options);
    return new FileSetSource(resolved, await resolveFileSet(resolved.files));
  }

  /** The file names of the set, in read order. */
  get fileNames(): readonly string[] {
    return this.names;
  }

  partitions(): readonly SourcePartition[] {
    return [this.partition];
  }

  async *batches(signal: AbortSignal): AsyncIterable<SourceBatch> {
    if (this.iterating) {
      throw new FileSourceError('TWG_FILE_SOURCE_STATE', 'batches() is already being iterated');
    }
    this.iterating = true;
    this.started = true;
    try {
      for (;;) {
        if (!(await this.gate.pass(signal, () => this.closed))) return;
        let batch: SourceBatch | undefined;
        try {
          batch = this.ready ?? (await this.assemble());
        } catch (error) {
          // A read cut off by close() fails on a closed handle: the source
          // is closed, its iteration ends, and that is no error.
          if (this.isClosed()) return;
          throw error;
        }
        this.ready = undefined;
        if (batch === undefined) return;
        if (signal.aborted || this.closed) {
          this.ready = batch;
          return;
        }
        this.batchCount++;
        this.records += batch.records.length;
        yield batch;
      }
    } finally {
      this.iterating = false;
    }
  }

  cursorAt(partition: SourcePartition, next: number): SourceCursor {
    this.checkPartition(partition);
    checkOffset(next, 'next');
    if (this.files.length === 0) {
      throw new FileSourceError('TWG_FILE_POSITION_UNKNOWN', 'an empty file set has no position', {
        field: 'next',
      });
    }
    const place = this.boundaries.placeOf(next);
    const file = this.names[place.fileIndex];
    if (file === undefined) throw new Error(`boundary in file ${place.fileIndex}, outside the set`);
    return {
      kind: 'file-set',
      files: this.names,
      file,
      position: place.position,
      nextOffset: next,
      consumed: this.consumed.upTo(place.fileIndex, place.position),
    };
  }

  seek(partition: SourcePartition, cursor: SourceCursor): void {
    this.checkPartition(partition);
    if (this.started || this.closed) {
      throw new FileSourceError(
        'TWG_FILE_SOURCE_STATE',
        `seek is refused ${this.closed ? 'after close()' : 'once batches() has started'}`,
      );
    }
    const point = resumePoint(cursor, this.files, this.options.format);
    this.fileIndex = point.fileIndex;
    this.openAt = point.position;
    this.skipRows = point.skipRows;
    this.nextOffset = point.nextOffset;
    this.boundaries.reset(point.nextOffset, {
      fileIndex: point.fileIndex,
      position: point.position,
    });
  }

  pause(partitions: readonly SourcePartition[]): void {
    if (partitions.some((p) => samePartition(p, this.partition))) this.gate.pause();
  }

  resume(partitions: readonly SourcePartition[]): void {
    if (partitions.some((p) => samePartition(p, this.partition))) this.gate.resume();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.gate.release();
    const open = this.reader;
    this.reader = undefined;
    if (open !== undefined) await open.file.close();
  }

  stats(): FileSetSourceStats {
    const current = this.reader?.reader;
    return {
      files: this.files.length,
      filesDone: this.filesDone,
      bytesRead: this.bytesDone + (current?.bytesRead ?? 0),
      records: this.records,
      batches: this.batchCount,
      oversizedRecords: this.oversized,
      maxBufferBytes: Math.max(this.maxBuffer, current?.maxBufferBytes ?? 0),
      pendingBoundaries: this.boundaries.size,
    };
  }

  /**
   * Builds the next batch. Its state lives on the source, not in this call,
   * so a read that throws leaves the records taken so far in place for the
   * next call: none is lost, none is read twice.
   */
  private async assemble(): Promise<SourceBatch | undefined> {
    const { maxBatchRecords, maxBatchBytes, maxRecordBytes } = this.options;
    for (;;) {
      let next = this.carried;
      this.carried = undefined;
      if (next === undefined) {
        const open = await this.currentReader();
        if (this.isClosed()) return undefined;
        if (open === undefined) return this.finish(this.endOfSet());
        const position = open.reader.nextPosition;
        const taken = open.reader.take();
        if (taken === NEED_READ) {
          await open.reader.fill();
          continue;
        }
        if (taken === END_OF_FILE) {
          await this.finishFile(open);
          continue;
        }
        next = { record: taken, headers: open.headers, fileIndex: this.fileIndex, position };
      }
      const size = next.record.value.byteLength;
      const oversized = size > maxRecordBytes;
      // An oversized record goes alone: the pipeline quarantines records, and
      // one batch must not carry good records into quarantine with it.
      if (this.building.length > 0 && (oversized || this.buildingBytes + size > maxBatchBytes)) {
        this.carried = next;
        return this.finish({ fileIndex: next.fileIndex, position: next.position });
      }
      this.building.push({
        offset: this.nextOffset++,
        key: null,
        value: next.record.value,
        timestamp: next.record.timestamp,
        headers: next.headers,
      });
      this.buildingBytes += size;
      if (oversized) this.oversized++;
      if (
        oversized ||
        this.building.length >= maxBatchRecords ||
        this.buildingBytes >= maxBatchBytes
      ) {
        const open = this.reader;
        if (open === undefined) throw new Error('a record was taken with no reader open');
        return this.finish({ fileIndex: this.fileIndex, position: open.reader.nextPosition });
      }
    }
  }

  /** Closes the batch being built; `place` is where the record after it starts. */
  private finish(place: FilePlace): SourceBatch | undefined {
    const records = this.building;
    const first = records[0];
    const last = records[records.length - 1];
    if (first === undefined || last === undefined) return undefined;
    this.building = [];
    this.buildingBytes = 0;
    const span = offsetSpan(this.partition.topic, 0, first.offset, last.offset + 1);
    this.boundaries.add(span.end, place);
    return { span, records };
  }

  private endOfSet(): FilePlace {
    const last = this.files.length - 1;
    return { fileIndex: last, position: this.files[last]?.size ?? 0 };
  }

  private async currentReader(): Promise<OpenReader | undefined> {
    if (this.reader !== undefined) return this.reader;
    const entry = this.files[this.fileIndex];
    if (entry === undefined || this.closed) return undefined;
    let file: OpenFile;
    try {
      file = await this.options.access.open(entry.path);
    } catch (cause) {
      throw readFailed(entry.name, 'open', cause);
    }
    try {
      await this.checkUnchanged(file, entry);
      const reader = await this.openReader(file, entry);
      if (this.isClosed()) {
        await file.close();
        return undefined;
      }
      this.openAt = 0;
      this.skipRows = 0;
      this.reader = {
        file,
        entry,
        reader,
        headers: Object.freeze([
          Object.freeze([FILE_HEADER, Buffer.from(entry.name, 'utf8')] as const),
        ]),
      };
      return this.reader;
    } catch (error) {
      await file.close();
      throw error;
    }
  }

  private async openReader(file: OpenFile, entry: FileEntry): Promise<FileRecordReader> {
    const { format, readChunkBytes, maxBufferBytes, timestampColumn } = this.options;
    const timestamp = Math.floor(entry.mtimeMs);
    if (format === 'ndjson') {
      return new NdjsonReader(
        file,
        { name: entry.name, size: entry.size, timestamp, readChunkBytes, maxBufferBytes },
        this.openAt,
      );
    }
    return IpcReader.open(
      file,
      { name: entry.name, size: entry.size, timestamp, maxBufferBytes, timestampColumn },
      { position: this.openAt, skipRows: this.skipRows },
    );
  }

  /** The end of a file: it must still be the file the set was opened with. */
  private async finishFile(open: OpenReader): Promise<void> {
    await this.checkUnchanged(open.file, open.entry);
    this.reader = undefined;
    this.fileIndex++;
    this.filesDone++;
    this.bytesDone += open.reader.bytesRead;
    this.maxBuffer = Math.max(this.maxBuffer, open.reader.maxBufferBytes);
    await open.file.close();
  }

  /**
   * Offsets are counted across the set, so a file that grew, shrank or was
   * rewritten since the set was opened would shift or change records a
   * stored cursor already counted: refused rather than read.
   */
  private async checkUnchanged(file: OpenFile, entry: FileEntry): Promise<void> {
    let now;
    try {
      now = await file.stat();
    } catch (cause) {
      throw readFailed(entry.name, 'stat', cause);
    }
    if (now.size !== entry.size || now.mtimeMs !== entry.mtimeMs) {
      throw new FileSourceError(
        'TWG_FILE_CHANGED',
        `was ${entry.size} bytes modified at ${entry.mtimeMs} when the set was opened, is ${now.size} bytes modified at ${now.mtimeMs}: files must not change while read`,
        { file: entry.name },
      );
    }
  }

  /** A method, not the field: `close()` may run while this source awaits a read. */
  private isClosed(): boolean {
    return this.closed;
  }

  private checkPartition(partition: SourcePartition): void {
    if (!samePartition(partition, this.partition)) {
      throw new FileSourceError(
        'TWG_FILE_SOURCE_STATE',
        `partition ${partition.topic}/${partition.partition} is not this source's ${this.partition.topic}/0`,
        { field: 'partition' },
      );
    }
  }
}

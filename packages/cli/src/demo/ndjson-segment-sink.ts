import { mkdir, open, readdir, readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import {
  RecordIdHasher,
  SinkError,
  type Confirm,
  type ConfirmTarget,
  type ErrorClass,
  type OffsetSpan,
  type PrimaryRawDescriptor,
  type ReplayableSink,
  type SinkId,
  type SourceBatch,
  type SourceRecord,
} from '@thalweg/connector-core';

interface Pending {
  readonly batch: SourceBatch;
  readonly confirm: Confirm<'primary-raw'>;
  readonly submittedAt: number;
}

/**
 * An example primary-raw sink for the demo: each batch becomes one NDJSON
 * segment file, durable once written, fsynced, renamed into place and its
 * directory fsynced (flush-close durability). `submit` only queues; a
 * background lane writes whatever has queued as one burst, syncs the
 * directory once for the burst, then confirms the batches in order. The
 * Arrow IPC raw-segment sink of @thalweg/sink-files replaces it.
 */
export class NdjsonSegmentSink implements ReplayableSink<SourceBatch> {
  readonly descriptor: PrimaryRawDescriptor;
  private queue: Pending[] = [];
  private wake: (() => void) | null = null;
  private space: (() => void) | null = null;
  private idle: (() => void)[] = [];
  private failure: SinkError | null = null;
  private closed = false;
  private writing = false;
  private readonly lane: Promise<void>;
  readonly bursts: number[] = [];

  constructor(
    id: SinkId,
    private readonly dir: string,
    private readonly cluster: string,
    private readonly target: ConfirmTarget<'primary-raw'>,
    private readonly capacity = 64,
  ) {
    this.descriptor = {
      id,
      kind: 'ndjson-segments',
      durability: { kind: 'flush-close' },
      recovery: { kind: 'readable' },
    };
    this.lane = this.run();
  }

  async submit(
    batch: SourceBatch,
    span: OffsetSpan,
    confirm: Confirm<'primary-raw'>,
  ): Promise<void> {
    if (span !== batch.span) throw this.error('fatal-config', 'the span must be the batch span');
    while (this.queue.length >= this.capacity && this.failure === null && !this.closed) {
      // A full queue makes submit wait: that wait is the backpressure.
      await new Promise<void>((resolve) => (this.space = resolve));
    }
    this.ensureUsable();
    this.queue.push({ batch, confirm, submittedAt: Date.now() });
    this.wake?.();
  }

  async flush(): Promise<void> {
    while ((this.queue.length > 0 || this.writing) && this.failure === null) {
      await new Promise<void>((resolve) => this.idle.push(resolve));
    }
    if (this.failure !== null) throw this.failure;
  }

  async close(): Promise<void> {
    await this.flush();
    this.closed = true;
    this.wake?.();
    await this.lane;
  }

  async *read(span: OffsetSpan): AsyncIterable<SourceBatch> {
    const dir = join(this.dir, span.topic, String(span.partition));
    const names = (await readdir(dir).catch(() => [])).filter((n) => n.endsWith('.ndjson')).sort();
    for (const name of names) {
      const [start, end] = name.replace('.ndjson', '').split('-').map(Number);
      if (start === undefined || end === undefined || end <= span.start || start >= span.end)
        continue;
      const records: SourceRecord[] = (await readFile(join(dir, name), 'utf8'))
        .split('\n')
        .filter((line) => line.length > 0)
        .map((line) => JSON.parse(line) as { offset: number; timestamp: number; value: string })
        .filter((r) => r.offset >= span.start && r.offset < span.end)
        .map((r) => ({
          offset: r.offset,
          key: null,
          value: Buffer.from(r.value, 'base64'),
          timestamp: r.timestamp,
          headers: {},
        }));
      yield {
        span: { ...span, start: Math.max(start, span.start), end: Math.min(end, span.end) },
        records,
      };
    }
  }

  private async run(): Promise<void> {
    for (;;) {
      while (this.queue.length === 0 && !this.closed) {
        await new Promise<void>((resolve) => (this.wake = resolve));
      }
      if (this.queue.length === 0) return;
      // Take everything ready as one burst: one directory sync confirms it all.
      const burst = this.queue;
      this.queue = [];
      this.writing = true;
      this.space?.();
      try {
        const dirs = new Set<string>();
        for (const p of burst) dirs.add(await this.writeSegment(p.batch));
        for (const d of dirs) await syncDirectory(d);
        this.bursts.push(burst.length);
        const confirmedAt = Date.now();
        for (const p of burst) {
          const { span, records } = p.batch;
          await this.target.apply(p.confirm, {
            sink: this.descriptor.id,
            span,
            durability: 'flush-close',
            records: records.length,
            bytes: records.reduce((n, r) => n + r.value.byteLength, 0),
            submittedAt: p.submittedAt,
            confirmedAt,
          });
        }
      } catch (cause) {
        this.failure = this.error('poison', 'writing a raw segment failed', cause);
      } finally {
        this.writing = false;
        for (const resolve of this.idle.splice(0)) resolve();
      }
      if (this.failure !== null) return;
    }
  }

  private async writeSegment(batch: SourceBatch): Promise<string> {
    const { span, records } = batch;
    const dir = join(this.dir, span.topic, String(span.partition));
    await mkdir(dir, { recursive: true });
    const hasher = new RecordIdHasher(this.cluster, span.topic, span.partition);
    const body = records
      .map((r) =>
        JSON.stringify({
          _twg_record_id: hasher.hex(r.offset, r.value),
          offset: r.offset,
          timestamp: r.timestamp,
          value: Buffer.from(r.value).toString('base64'),
        }),
      )
      .join('\n');
    const name = `${String(span.start).padStart(16, '0')}-${String(span.end).padStart(16, '0')}.ndjson`;
    const tmp = join(dir, `.${name}.tmp`);
    const file = await open(tmp, 'w');
    try {
      await file.writeFile(`${body}\n`);
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(tmp, join(dir, name));
    return dir;
  }

  private error(errorClass: ErrorClass, message: string, cause?: unknown): SinkError {
    return new SinkError({ sink: this.descriptor.id, errorClass, message, cause });
  }

  private ensureUsable(): void {
    if (this.failure !== null) throw this.failure;
    if (this.closed) {
      throw this.error('fatal-config', 'submit after close');
    }
  }
}

async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

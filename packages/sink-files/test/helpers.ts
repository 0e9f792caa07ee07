import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterEach, onTestFinished } from 'vitest';
import {
  offsetSpan,
  rawAnchor,
  sinkId,
  type Confirm,
  type ConfirmTarget,
  type Receipt,
  type SourceBatch,
  type SourceRecord,
} from '@thalweg/connector-core';
import {
  nodeSegmentFs,
  RawSegmentSink,
  type RawSegmentSinkOptions,
  type SegmentFile,
  type SegmentFs,
} from '../src/index.js';

export const ID = sinkId('raw');
/**
 * Both writers, for the behaviours that must not depend on which thread
 * writes. The worker runs from the compiled dist/ (segment-worker-entry.ts):
 * `tsc -b` before the tests, as `pnpm test:all` does.
 */
export const WRITERS = ['inline', 'worker'] as const;
export const CLUSTER = 'cluster-a';
export const quiet = (): void => undefined;

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

/** A fresh directory under the OS temp dir, removed after the test. */
export async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'twg-sink-files-'));
  dirs.push(dir);
  return dir;
}

/** The entries of a raw directory other than its lock and manifest: segments, temp files, strangers. */
export async function dataFiles(dir: string): Promise<string[]> {
  return (await readdir(dir)).filter((n) => n !== 'writer.lock' && n !== 'raw.manifest').sort();
}

/** A record at `offset` with a deterministic value, a key unless `offset` is odd, headers on every third. */
export function record(offset: number, overrides: Partial<SourceRecord> = {}): SourceRecord {
  return {
    offset,
    key: offset % 2 === 0 ? Buffer.from(`k${offset}`) : null,
    value: Buffer.from(`value-${offset}`),
    timestamp: 1_700_000_000_000 + offset,
    headers:
      offset % 3 === 0
        ? [
            ['trace', Buffer.from(`t${offset}`)],
            ['empty', new Uint8Array(0)],
          ]
        : [],
    ...overrides,
  };
}

/** A batch of consecutive records `[start, end)` of one partition. */
export function batchOf(topic: string, partition: number, start: number, end: number): SourceBatch {
  return {
    span: offsetSpan(topic, partition, start, end),
    records: Array.from({ length: end - start }, (_, i) => record(start + i)),
  };
}

export function anchor(batch: SourceBatch): Confirm<'primary-raw'> {
  return rawAnchor(batch.span);
}

/** A confirm target recording what it was given, in order, optionally into a shared log. */
export function recordingTarget(log?: string[]): ConfirmTarget<'primary-raw'> & {
  applied: { confirm: Confirm<'primary-raw'>; receipt: Receipt }[];
} {
  const applied: { confirm: Confirm<'primary-raw'>; receipt: Receipt }[] = [];
  return {
    applied,
    apply: async (confirm, receipt) => {
      log?.push(`apply ${receipt.span.topic}/${receipt.span.partition}@${receipt.span.start}`);
      applied.push({ confirm, receipt });
    },
  };
}

/** A sink on `dir`; the inline writer unless `options.writer` says otherwise. */
export async function openSink(
  dir: string,
  options: Partial<RawSegmentSinkOptions> = {},
): Promise<RawSegmentSink> {
  const sink = await RawSegmentSink.open({
    id: ID,
    dir,
    cluster: CLUSTER,
    confirm: recordingTarget(),
    log: quiet,
    writer: 'inline',
    retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 2 },
    ...options,
  });
  // A test that ends with the sink failed or open still lets go of its files
  // (close is idempotent; a failed sink's close rejects with its failure).
  onTestFinished(() => sink.close().catch(() => undefined));
  return sink;
}

/** Every batch `read` yields for the span, concatenated to records. */
export async function readAll(
  sink: RawSegmentSink,
  topic: string,
  partition: number,
  start = 0,
  end = Number.MAX_SAFE_INTEGER,
): Promise<{ batches: SourceBatch[]; records: SourceRecord[] }> {
  const batches: SourceBatch[] = [];
  for await (const b of sink.read(offsetSpan(topic, partition, start, end))) batches.push(b);
  return { batches, records: batches.flatMap((b) => [...b.records]) };
}

/** Records as plain comparable data (Buffers and views become byte arrays). */
export function plain(records: readonly SourceRecord[]): unknown[] {
  return records.map((r) => ({
    offset: r.offset,
    key: r.key === null ? null : [...r.key],
    value: [...r.value],
    timestamp: r.timestamp,
    headers: r.headers.map(([k, v]) => [k, v === null ? null : [...v]]),
    tombstone: r.tombstone ?? false,
  }));
}

/** Resolves to whether `p` settled within a few macrotask turns (no timers involved). */
export async function settled(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  p.then(
    () => (done = true),
    () => (done = true),
  );
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
  return done;
}

export type FsOp =
  | 'create'
  | 'write'
  | 'sync'
  | 'close'
  | 'rename'
  | 'syncDir'
  | 'remove'
  | 'readFile'
  | 'append'
  | 'appendWrite'
  | 'appendSync'
  | 'truncate'
  | 'size';

interface Fault {
  readonly op: FsOp;
  remaining: number;
  readonly error: Error;
}

/**
 * The real file system with a log of every call (`op basename`) and faults
 * injected per operation: the next n calls of an op fail, or wait on a gate
 * until it is released (a slow disk).
 */
export class FaultyFs implements SegmentFs {
  readonly log: string[];
  private readonly faults: Fault[] = [];
  private readonly gates = new Map<FsOp, { promise: Promise<void>; release: () => void }>();
  readonly calls = new Map<FsOp, number>();

  constructor(log: string[] = []) {
    this.log = log;
  }

  /** The next `times` calls of `op` fail with `error` (Infinity: every call). */
  fail(op: FsOp, times = 1, error = new Error(`injected ${op} failure`)): void {
    this.faults.push({ op, remaining: times, error });
  }

  /** Calls of `op` wait until the returned release is called. */
  hold(op: FsOp): () => void {
    let release = (): void => undefined;
    const promise = new Promise<void>((resolve) => (release = resolve));
    const gate = {
      promise,
      release: () => {
        this.gates.delete(op);
        release();
      },
    };
    this.gates.set(op, gate);
    return gate.release;
  }

  private async step(op: FsOp, path: string): Promise<void> {
    this.calls.set(op, (this.calls.get(op) ?? 0) + 1);
    await this.gates.get(op)?.promise;
    this.log.push(`${op} ${basename(path)}`);
    const fault = this.faults.find((f) => f.op === op && f.remaining > 0);
    if (fault !== undefined) {
      fault.remaining--;
      this.log.push(`failed ${op} ${basename(path)}`);
      throw fault.error;
    }
  }

  ensureDir = (dir: string) => nodeSegmentFs.ensureDir(dir);
  list = (dir: string) => nodeSegmentFs.list(dir);

  readFile = async (path: string, scratch?: Uint8Array) => {
    await this.step('readFile', path);
    return nodeSegmentFs.readFile(path, scratch);
  };

  create = async (path: string): Promise<SegmentFile> => {
    await this.step('create', path);
    const file = await nodeSegmentFs.create(path);
    return {
      write: async (chunks) => {
        await this.step('write', path);
        await file.write(chunks);
      },
      sync: async () => {
        await this.step('sync', path);
        await file.sync();
      },
      close: async () => {
        await file.close();
        await this.step('close', path);
      },
    };
  };

  /** The manifest's appends: their writes and syncs are ops of their own. */
  append = async (path: string): Promise<SegmentFile> => {
    await this.step('append', path);
    const file = await nodeSegmentFs.append(path);
    return {
      write: async (chunks) => {
        await this.step('appendWrite', path);
        await file.write(chunks);
      },
      sync: async () => {
        await this.step('appendSync', path);
        await file.sync();
      },
      close: () => file.close(),
    };
  };

  truncate = async (path: string, length: number) => {
    await this.step('truncate', path);
    await nodeSegmentFs.truncate(path, length);
  };

  size = async (path: string) => {
    await this.step('size', path);
    return nodeSegmentFs.size(path);
  };

  rename = async (from: string, to: string) => {
    await this.step('rename', `${basename(from)} -> ${basename(to)}`);
    await nodeSegmentFs.rename(from, to);
  };

  syncDir = async (dir: string) => {
    await this.step('syncDir', dir);
    await nodeSegmentFs.syncDir(dir);
  };

  remove = async (path: string) => {
    await this.step('remove', path);
    await nodeSegmentFs.remove(path);
  };
}

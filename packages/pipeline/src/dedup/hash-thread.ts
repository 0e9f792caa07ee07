import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { SourceRecord } from '@thalweg/connector-core';
import { hashPacked, hexKeys, packValues, type HashKey } from './content-hash.js';
import type { HashAnswer, HashRequest } from './hash-worker.js';

/** A piece's digests: see {@link HashThread.digests}. */
export interface Digests {
  readonly digests: Uint8Array;
  readonly hashed: Uint8Array;
}

/**
 * Content hashing off the ingest thread: a piece's values go to one worker
 * thread packed in one buffer (transferred, not copied), its digests come
 * back the same way. Parsing each record's JSON and digesting it is most of
 * what dedup costs per record; on its own thread it overlaps the ingest
 * loop. Where the compiled worker is missing (a test run from sources
 * without `tsc -b`) or the thread fails, pieces are hashed on this thread
 * instead, with the same function: the same keys either way.
 */
export class HashThread {
  private worker: Worker | null = null;
  private failed = false;
  private next = 0;
  private readonly waiting = new Map<number, (answer: HashAnswer) => void>();

  constructor(private readonly log: (line: string) => void) {}

  /** The hex content hash of each record (null where it has none), in order. */
  async hash(key: HashKey, records: readonly SourceRecord[]): Promise<(string | null)[]> {
    const { digests, hashed } = await this.digests(key, records);
    return hexKeys(digests, hashed);
  }

  /**
   * The content hashes of the records, packed: CONTENT_HASH_BYTES per record
   * in `digests` (4-byte aligned), `hashed[i]` 0 where record i has none.
   */
  async digests(key: HashKey, records: readonly SourceRecord[]): Promise<Digests> {
    const worker = this.started();
    if (worker === null) return hashPacked(key, packValues(records));
    const packed = packValues(records);
    const id = this.next++;
    const answer = await new Promise<HashAnswer>((resolve) => {
      this.waiting.set(id, resolve);
      const request: HashRequest = { id, key, packed };
      worker.postMessage(request, [
        packed.bytes.buffer,
        packed.ends.buffer,
        packed.tombstones.buffer,
      ]);
      // Busy while an answer is owed, so the thread does not keep an idle process alive.
      if (this.waiting.size === 1) worker.ref();
    });
    // The thread failed mid-piece (its buffers went with it): this thread hashes it.
    if ('error' in answer) return hashPacked(key, packValues(records));
    return { digests: answer.digests, hashed: answer.hashed };
  }

  /**
   * Boots the thread now rather than on the first piece, so its start (a
   * new isolate loading the module) overlaps what comes before that piece.
   * Idle, it does not keep the process alive.
   */
  start(): void {
    this.started();
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    this.failed = true;
    await worker?.terminate();
  }

  private started(): Worker | null {
    if (this.worker !== null || this.failed) return this.worker;
    const entry = hashWorkerEntry();
    if (!existsSync(fileURLToPath(entry))) {
      this.failed = true;
      this.log(`dedup: no compiled hash thread at ${entry.pathname}; hashing on the ingest thread`);
      return null;
    }
    const worker = new Worker(entry, { execArgv: [] });
    worker.unref();
    worker.on('message', (answer: HashAnswer) => {
      const resolve = this.waiting.get(answer.id);
      this.waiting.delete(answer.id);
      if (this.waiting.size === 0) worker.unref();
      resolve?.(answer);
    });
    const fail = (reason: string): void => {
      this.failed = true;
      this.worker = null;
      this.log(`dedup: the hash thread stopped (${reason}); hashing on the ingest thread`);
      for (const [id, resolve] of this.waiting) resolve({ id, error: reason });
      this.waiting.clear();
    };
    worker.on('error', (error) => fail(error.message));
    worker.on('exit', (code) => {
      if (this.worker === worker) fail(`exit code ${code}`);
    });
    this.worker = worker;
    return worker;
  }
}

/**
 * `hash-worker.js` beside this module in the compiled `dist/`; from the
 * TypeScript source (under vitest) the compiled one in `../../dist/dedup/`,
 * since Node 20 cannot run a `.ts` file as a worker.
 */
function hashWorkerEntry(): URL {
  const here = import.meta.url;
  return new URL(
    here.endsWith('.ts') ? '../../dist/dedup/hash-worker.js' : './hash-worker.js',
    here,
  );
}

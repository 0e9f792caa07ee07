import {
  compiledWorker,
  OffThread,
  packedBuffers,
  packValues,
  type PackedValues,
  type SourceRecord,
} from '@thalweg/connector-core';
import { hashPacked, hexKeys, type HashKey } from './content-hash.js';

/** A piece's digests: see {@link HashThread.digests}. */
export interface Digests {
  readonly digests: Uint8Array;
  readonly hashed: Uint8Array;
}

/** A request to the hash thread: one piece's values (hash-worker.ts answers it). */
export interface HashRequest {
  readonly key: HashKey;
  readonly packed: PackedValues;
}

/**
 * Content hashing off the ingest thread (connector-core's `OffThread`): a
 * piece's values go to one worker thread packed in one buffer, its digests
 * come back the same way. Parsing each record's JSON and digesting it is
 * most of what dedup costs per record; on its own thread it overlaps the
 * ingest loop. Where the compiled worker is missing or the thread fails,
 * pieces are hashed on this thread with the same function: the same keys
 * either way.
 */
export class HashThread {
  private readonly thread: OffThread<HashRequest, Digests>;

  constructor(log: (line: string) => void) {
    this.thread = new OffThread({ entry: hashWorkerEntry(), name: 'dedup: the hash thread', log });
  }

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
    const packed = packValues(records);
    // The buffers go to the thread: hashing here again packs afresh.
    return this.thread.run({ key, packed }, packedBuffers(packed), () =>
      hashPacked(key, packValues(records)),
    );
  }

  /** Boots the thread now rather than on the first piece (see `OffThread.start`). */
  start(): void {
    this.thread.start();
  }

  async close(): Promise<void> {
    await this.thread.close();
  }
}

/** The compiled `hash-worker.js` (see `compiledWorker`). */
function hashWorkerEntry(): URL {
  return compiledWorker(import.meta.url, 'hash-worker.js', '../../dist/dedup');
}

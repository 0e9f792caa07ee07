import { expect } from 'vitest';
import type { BackupStore } from '../../src/index.js';
import { ManualScheduler } from '../../src/index.js';
import type { CoordinationFixture } from './coordination-contract.js';

/** A clock a test moves by hand. */
export class FakeClock {
  constructor(public ms = 1_700_000_000_000) {}
  readonly now = (): number => this.ms;
}

/** A BackupStore in memory, with the ETag condition S3 applies. */
export class MemoryBackupStore implements BackupStore {
  body: string | null = null;
  writes = 0;
  private version = 0;

  async read() {
    return this.body === null ? null : { body: this.body, etag: String(this.version) };
  }

  async write(body: string, etag: string | null) {
    const current = this.body === null ? null : String(this.version);
    if (etag !== current) return null;
    this.body = body;
    this.writes++;
    return String(++this.version);
  }

  async close() {}
}

/** The fixture parts of a coordination on a fake clock and a manual scheduler. */
export function drivenFixture(
  clock: FakeClock,
  scheduler: ManualScheduler,
): Omit<CoordinationFixture, 'coordination'> {
  return {
    async after(ms, check, what) {
      clock.ms += ms;
      expect(await check(), what).toBe(true);
    },
    async eventually(check, what) {
      await scheduler.run();
      expect(await check(), what).toBe(true);
    },
  };
}

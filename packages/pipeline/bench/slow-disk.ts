import { nodeSegmentFs, type SegmentFile, type SegmentFs } from '@thalweg/sink-files';

/**
 * The real file system behind a throttle on segment writes: while `rate` is
 * set, every `write` takes as long as its bytes need at that many bytes per
 * second (on top of the real write), so raw's writer falls behind and its
 * queue fills the way it does on a slow or saturated disk. Setting `rate` to
 * null restores full speed at once, also for a write already being delayed.
 */
export class SlowDisk {
  /** Bytes per second segment writes are held to; null: as fast as the disk. */
  rate: number | null = null;
  /** Milliseconds writes spent in the throttle, for the report. */
  delayedMs = 0;
  readonly fs: SegmentFs;

  constructor(inner: SegmentFs = nodeSegmentFs) {
    const wrap = (file: SegmentFile): SegmentFile => ({
      write: async (chunks) => {
        await file.write(chunks);
        await this.hold(chunks.reduce((n, c) => n + c.byteLength, 0));
      },
      sync: () => file.sync(),
      close: () => file.close(),
    });
    this.fs = {
      ensureDir: (dir) => inner.ensureDir(dir),
      list: (dir) => inner.list(dir),
      readFile: (path, scratch) => inner.readFile(path, scratch),
      create: async (path) => wrap(await inner.create(path)),
      append: async (path) => wrap(await inner.append(path)),
      truncate: (path, length) => inner.truncate(path, length),
      size: (path) => inner.size(path),
      rename: (from, to) => inner.rename(from, to),
      syncDir: (dir) => inner.syncDir(dir),
      remove: (path) => inner.remove(path),
    };
  }

  /** Waits until `bytes` have drained at the current rate, in slices that see a rate change. */
  private async hold(bytes: number): Promise<void> {
    const started = performance.now();
    let left = bytes;
    let last = started;
    for (let rate = this.rate; left > 0 && rate !== null; rate = this.rate) {
      await new Promise((r) => setTimeout(r, Math.min(50, (left / rate) * 1000)));
      const now = performance.now();
      // Drained at the rate in force now: a restored disk ends the wait here.
      left -= ((now - last) / 1000) * (this.rate ?? Infinity);
      last = now;
    }
    this.delayedMs += performance.now() - started;
  }
}

import type { SegmentWriter } from './segment-writer.js';

/**
 * The writer behind a sink, for tests that must reach it (to make the
 * writer thread exit as a crash would). Not exported from the package: a
 * WeakMap rather than a public accessor, so the sink's API stays what
 * callers may use.
 */
const writers = new WeakMap<object, SegmentWriter>();

export function registerWriter(sink: object, writer: SegmentWriter): void {
  writers.set(sink, writer);
}

export function writerOf(sink: object): SegmentWriter | undefined {
  return writers.get(sink);
}

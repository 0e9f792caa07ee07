import { makeData, RecordBatch, Schema, Field, Int32, Struct } from 'apache-arrow';
import {
  offsetSpan,
  type Confirm,
  type ConfirmTarget,
  type Lane,
  type OffsetSpan,
  type Receipt,
} from '@thalweg/connector-core';

/** A one-column batch of `rows` int32 values. */
export function batchOf(rows: number): RecordBatch {
  const schema = new Schema([new Field('n', new Int32(), false)]);
  const child = makeData({
    type: new Int32(),
    length: rows,
    data: Int32Array.from({ length: rows }, (_, i) => i),
  });
  return new RecordBatch(
    schema,
    makeData({ type: new Struct(schema.fields), length: rows, children: [child] }),
  );
}

export function spanAt(i: number, size = 10): OffsetSpan {
  return offsetSpan('orders', 0, i * size, (i + 1) * size);
}

/** A confirm target that records what it was given, in order. */
export function recordingTarget<L extends Lane>(): ConfirmTarget<L> & {
  applied: { confirm: Confirm<L>; receipt: Receipt }[];
} {
  const applied: { confirm: Confirm<L>; receipt: Receipt }[] = [];
  return {
    applied,
    apply: async (confirm, receipt) => {
      applied.push({ confirm, receipt });
    },
  };
}

export const quiet = (): void => undefined;

/** Resolves to whether `p` settled within the current macrotask turns (no timers involved). */
export async function settled(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  p.then(
    () => (done = true),
    () => (done = true),
  );
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
  return done;
}

/** Anything with streams that acknowledge on demand (a FakeTransportFactory). */
interface Acknowledging {
  readonly opened: readonly { acknowledgeUpTo(offset: number): void }[];
}

/**
 * Acknowledges everything sent on every stream opened so far, again and
 * again, until `p` settles: a lane sends what was queued during a wait only
 * after that wait, so one acknowledgement never covers all of it.
 */
export async function drive<T>(factory: Acknowledging, p: Promise<T>): Promise<T> {
  const state = { done: false };
  p.then(
    () => (state.done = true),
    () => (state.done = true),
  );
  for (let i = 0; i < 2000 && !state.done; i++) {
    for (const t of factory.opened) t.acknowledgeUpTo(Number.MAX_SAFE_INTEGER);
    await new Promise((r) => setImmediate(r));
  }
  return p;
}

/** Waits, by turns of the event loop (bounded, never a timer), until `cond` holds. */
export async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 10_000 && !cond(); i++) await new Promise((r) => setImmediate(r));
  if (!cond()) throw new Error('the condition never held');
}

import { describe, expect, it } from 'vitest';
import {
  OneStreamPartition,
  type OneStreamFault,
} from '../../src/source-support/one-stream-partition.js';
import type { SourceCursor } from '../../src/source-cursor.js';

/** The error the test's source raises: its fault and message, to match exactly. */
class FaultError extends Error {
  constructor(
    readonly fault: OneStreamFault,
    message: string,
  ) {
    super(message);
  }
}

function streamOf(resumable: boolean) {
  const stops: string[] = [];
  const stream = new OneStreamPartition({
    topic: 't',
    resumable,
    prefetchBatches: 10,
    prefetchBytes: 100,
    stop: () => stops.push('stop'),
    onAbort: 'wake',
    fail: (fault, message) => new FaultError(fault, message),
  });
  return { stream, stops };
}

/** The fault `run` raised, or a test failure naming that it raised none. */
function faultOf(run: () => unknown): { fault: OneStreamFault; message: string } {
  try {
    run();
  } catch (error) {
    if (error instanceof FaultError) return { fault: error.fault, message: error.message };
    throw error;
  }
  throw new Error('expected a fault, none was raised');
}

const own = { topic: 't', partition: 0 };
const token = (t: string, nextOffset: number): SourceCursor => ({
  kind: 'stream-token',
  token: t,
  nextOffset,
});
const logOffset = (nextOffset: number): SourceCursor => ({ kind: 'log-offset', nextOffset });

describe('OneStreamPartition', () => {
  it('is the one partition { topic, partition: 0 }, with its feed', () => {
    const { stream } = streamOf(false);
    expect(stream.partitions()).toEqual([own]);
    expect(stream.partition).toEqual(own);
    expect(stream.feed.started).toBe(false);
  });

  it('stores a stream-token cursor when resumable, a log-offset one when not', () => {
    expect(streamOf(true).stream.cursorAt(own, 7, 'abc')).toEqual(token('abc', 7));
    expect(streamOf(false).stream.cursorAt(own, 7, 'abc')).toEqual(logOffset(7));
  });

  it('returns the next row of a cursor of the right kind', () => {
    expect(streamOf(true).stream.seek(own, token('abc', 5))).toBe(5);
    expect(streamOf(false).stream.seek(own, logOffset(0))).toBe(0);
  });

  it('refuses a cursor of the other kind, naming the field', () => {
    expect(faultOf(() => streamOf(true).stream.seek(own, logOffset(1)))).toEqual({
      fault: { kind: 'cursor', field: 'cursor.kind' },
      message: 'a log-offset cursor; this resumable stream resumes from a stream-token cursor',
    });
    expect(faultOf(() => streamOf(false).stream.seek(own, token('x', 1)))).toEqual({
      fault: { kind: 'cursor', field: 'cursor.kind' },
      message: 'a stream-token cursor; this non-resumable stream resumes from a log-offset cursor',
    });
  });

  it.each([-1, 1.5, Number.NaN, 2 ** 53])('refuses %s as a next row', (bad) => {
    expect(faultOf(() => streamOf(false).stream.seek(own, logOffset(bad)))).toEqual({
      fault: { kind: 'cursor', field: 'cursor.nextOffset' },
      message: `${bad} is not a row offset`,
    });
  });

  it.each([-1, 1.5, Number.NaN, 2 ** 53])('refuses a cursor at %s, resumable or not', (bad) => {
    for (const resumable of [true, false]) {
      expect(faultOf(() => streamOf(resumable).stream.cursorAt(own, bad, 'abc'))).toEqual({
        fault: { kind: 'cursor', field: 'next' },
        message: `${bad} is not a row offset`,
      });
    }
  });

  it("runs the source's token check after the kind and before the offset", () => {
    const seen: string[] = [];
    const { stream } = streamOf(true);
    const refuse = (t: string) => {
      seen.push(t);
      throw new Error(`token ${t} refused`);
    };
    expect(() => stream.seek(own, token('other', -1), refuse)).toThrow('token other refused');
    expect(faultOf(() => stream.seek(own, logOffset(1), refuse)).fault.kind).toBe('cursor');
    expect(seen).toEqual(['other']);
  });

  it('refuses a foreign partition in seek and cursorAt as a call out of order', () => {
    const { stream } = streamOf(true);
    const foreign = { topic: 't', partition: 1 };
    const expected = {
      fault: { kind: 'state' },
      message: "partition t/1 is not this source's (t/0)",
    };
    expect(faultOf(() => stream.seek(foreign, token('x', 0)))).toEqual(expected);
    expect(faultOf(() => stream.cursorAt(foreign, 0, 'x'))).toEqual(expected);
  });

  it('refuses a seek after batches() started', async () => {
    const { stream } = streamOf(false);
    let end!: () => void;
    const pump = () =>
      new Promise<void>((resolve) => {
        end = resolve;
      });
    const batches = stream.feed.batches(new AbortController().signal, pump);
    const first = batches.next();
    expect(stream.feed.started).toBe(true);
    expect(faultOf(() => stream.seek(own, logOffset(0)))).toEqual({
      fault: { kind: 'state' },
      message: 'seek after batches() started',
    });
    end();
    await expect(first).resolves.toEqual({ done: true, value: undefined });
  });

  it('refuses a second batches()', async () => {
    const { stream } = streamOf(false);
    const signal = new AbortController().signal;
    const first = stream.batches(signal, () => Promise.resolve());
    await expect(first.next()).resolves.toEqual({ done: true, value: undefined });
    const again = stream.batches(signal, () => Promise.resolve());
    const refused = await again.next().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(FaultError);
    expect((refused as FaultError).fault).toEqual({ kind: 'state' });
    expect((refused as FaultError).message).toBe('batches() called twice');
  });

  it('passes pause, resume and prefetch fill through to its feed', () => {
    const { stream } = streamOf(false);
    const records = [
      { key: null, value: new Uint8Array(50), headers: [], timestamp: 0, offset: 0 },
    ];
    stream.feed.push({ start: 0, records, bytes: 50 });
    expect(stream.prefetchFill()).toBe(0.5);
    stream.pause([own]);
    expect(stream.prefetchFill()).toBe(0);
    stream.resume([own]);
    expect(stream.prefetchFill()).toBe(0.5);
  });
});

import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '@thalweg/connector-core';
import { IpcStreamDecoder } from '@thalweg/stream-arrow';
import { waitFor } from '@thalweg/test-services';
import { afterEach, describe, expect, it } from 'vitest';
import { IpcStreamSource, IpcStreamSourceError, type IpcStreamConnection } from '../src/index.js';
import { BASE_TS_MS, flight, flightScript, payloadOf } from '@thalweg/test-services';
import { startProducer, stopProducers } from './pyarrow-producer.js';

// The peer is pyarrow's own IPC writer (scripts/services/flight/ipc_producer.py),
// so these tests check the source against bytes it did not write itself.

afterEach(stopProducers);

const ROWS = 1000;
const BATCH_ROWS = 100;
const shape = ['--rows', String(ROWS), '--batch-rows', String(BATCH_ROWS)];

interface Read {
  readonly offsets: number[];
  readonly values: Record<string, unknown>[];
  readonly error: unknown;
}

/** Everything the source yields until it ends or fails, values parsed as JSON. */
async function readAll(source: IpcStreamSource): Promise<Read> {
  const offsets: number[] = [];
  const values: Record<string, unknown>[] = [];
  try {
    for await (const batch of source.batches(new AbortController().signal)) {
      for (const r of batch.records) {
        offsets.push(r.offset);
        values.push(JSON.parse(Buffer.from(r.value).toString('utf8')) as Record<string, unknown>);
      }
    }
  } catch (error) {
    return { offsets, values, error };
  }
  return { offsets, values, error: undefined };
}

const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

/**
 * The rows generated_rows.py makes for ids from..to-1, as the source renders
 * them (row-json.ts: an int64 as a decimal string, a timestamp as ISO 8601).
 */
const generated = (from: number, to: number, payloadBytes = 0) =>
  range(from, to).map((id) => ({
    id: String(id),
    payload: payloadOf(id, payloadBytes),
    ts: new Date(BASE_TS_MS + id).toISOString(),
  }));

const tcp = (port: string): IpcStreamConnection => ({
  kind: 'tcp',
  host: '127.0.0.1',
  port: Number(port),
});

function refusal(read: Read): IpcStreamSourceError {
  if (read.error instanceof IpcStreamSourceError) return read.error;
  throw new Error(`expected the source to fail, it ended with ${String(read.error)}`);
}

/** The stream byte where batch `index` starts in the producer's clean stream, decoded from its bytes. */
async function batchStart(args: readonly string[], index: number): Promise<number> {
  const producer = await startProducer(['--tcp', '0', ...args]);
  const socket = connect({ host: '127.0.0.1', port: Number(producer.where) });
  const decoder = new IpcStreamDecoder({ maxMessageBytes: 1 << 24 });
  for await (const chunk of socket as AsyncIterable<Buffer>) {
    decoder.push(chunk);
    for (let item = decoder.next(); item.kind !== 'need-more'; item = decoder.next()) {
      if (item.kind === 'batch' && item.index === index) {
        socket.destroy();
        return item.offset;
      }
      if (item.kind === 'end') break;
    }
  }
  throw new Error(`the producer's stream has no batch ${index}`);
}

describe('IpcStreamSource against pyarrow: a full stream', () => {
  const path = join(tmpdir(), `twg-ipc-peer-${process.pid}.sock`);
  for (const [kind, where, connection] of [
    ['tcp', ['--tcp', '0'], tcp],
    ['unix', ['--unix', path], (p: string): IpcStreamConnection => ({ kind: 'unix', path: p })],
    [
      'http',
      ['--http', '0'],
      (port: string): IpcStreamConnection => ({ kind: 'http', url: `http://127.0.0.1:${port}/s` }),
    ],
  ] as const) {
    it(`reads every row over ${kind}, offsets the generated ids, values id/payload/ts`, async () => {
      const producer = await startProducer([...where, ...shape, '--payload-bytes', '40']);
      const source = new IpcStreamSource({
        connection: connection(producer.where),
        topic: 'live',
        maxBatchRecords: 64,
      });
      const read = await readAll(source);
      expect(read.error).toBeUndefined();
      expect(read.offsets).toEqual(range(0, ROWS));
      expect(read.values).toEqual(generated(0, ROWS, 40));
      expect(source.stats()).toMatchObject({ rows: ROWS, batches: ROWS / BATCH_ROWS });
    });
  }
});

describe('IpcStreamSource against pyarrow: a stream on a pipe (what stdin is)', () => {
  /** pyarrow's producer writing the stream to its stdout, which the source reads as a Readable. */
  function piped(args: readonly string[]) {
    const child = spawn(flight().python, [flightScript('ipc_producer.py'), '--stdout', ...args], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const exited = new Promise<number | string>((resolve) => {
      child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown'));
    });
    const source = new IpcStreamSource({
      connection: { kind: 'readable', readable: child.stdout },
      topic: 'live',
    });
    return { source, exited };
  }

  it('reads every row 0..N-1 in order', async () => {
    const { source, exited } = piped(shape);
    const read = await readAll(source);
    expect(read.error).toBeUndefined();
    expect(read.offsets).toEqual(range(0, ROWS));
    expect(read.values).toEqual(generated(0, ROWS));
    expect(await exited).toBe(0);
    expect(source.origin).toEqual({ kind: 'non-replayable', resumable: false });
  });

  it('fails when the producer dies mid-stream, naming the rows received and the last offset', async () => {
    const { source, exited } = piped([...shape, '--kill-after-batches', '3']);
    const read = await readAll(source);
    expect(await exited).toBe(9);
    const error = refusal(read);
    expect(error.code).toBe('TWG_IPC_STREAM_DROPPED');
    expect(read.offsets).toEqual(range(0, 300));
    expect(read.values).toEqual(generated(0, 300));
    expect(error.message).toContain('the last row taken is offset 299');
  });
});

describe('IpcStreamSource against pyarrow: a resumable producer killed mid-stream', () => {
  /**
   * The producer exits after `killAfter` batches; once the source sits in
   * its reconnect backoff, the same producer starts again on the same port
   * and the clock is moved past the backoff.
   */
  async function killedAndRestarted(killAfter: number, seekTo: number) {
    const args = [...shape, '--resumable', '--stream-id', 'peer-resume'];
    const first = await startProducer([
      '--tcp',
      '0',
      ...args,
      '--kill-after-batches',
      `${killAfter}`,
    ]);
    const clock = new ManualClock();
    const source = new IpcStreamSource({
      connection: tcp(first.where),
      topic: 'live',
      resume: true,
      reconnect: { baseDelayMs: 50, maxDelayMs: 50, maxAttempts: 3 },
      scheduler: clock,
    });
    if (seekTo > 0) {
      source.seek(source.partitions()[0]!, { kind: 'stream-token', token: '', nextOffset: seekTo });
    }
    const reading = readAll(source);
    expect(await first.exited).toBe(9);
    await waitFor(() => clock.scheduled > 0, 'the source to wait in its reconnect backoff');
    const again = await startProducer(['--tcp', first.where, ...args]);
    expect(again.where).toBe(first.where);
    clock.advance(50);
    return { read: await reading, source };
  }

  it('reconnects on the same port and reads every row 0..N-1 exactly once, in order', async () => {
    const { read, source } = await killedAndRestarted(4, 0);
    expect(read.error).toBeUndefined();
    expect(read.offsets).toEqual(range(0, ROWS));
    expect(read.values).toEqual(generated(0, ROWS));
    expect(source.stats()).toMatchObject({ rows: ROWS, reconnects: 1 });
    expect(source.cursorAt(source.partitions()[0]!, ROWS)).toEqual({
      kind: 'stream-token',
      token: 'peer-resume',
      nextOffset: ROWS,
    });
  });

  it('drops the rows below next that a producer restarting at a batch boundary sends again', async () => {
    // Asked for 150, the producer starts at 100: rows 100..149 are duplicates.
    const { read, source } = await killedAndRestarted(3, 150);
    expect(read.error).toBeUndefined();
    expect(read.offsets).toEqual(range(150, ROWS));
    expect(read.values).toEqual(generated(150, ROWS));
    expect(source.stats()).toMatchObject({
      rows: ROWS - 150,
      duplicatesDropped: 50,
      reconnects: 1,
    });
  });
});

describe('IpcStreamSource against pyarrow: what it refuses', () => {
  it('fails a non-resumable stream killed mid-stream, naming the rows received and the last offset', async () => {
    const producer = await startProducer(['--tcp', '0', ...shape, '--kill-after-batches', '3']);
    const source = new IpcStreamSource({ connection: tcp(producer.where), topic: 'live' });
    const read = await readAll(source);
    expect(await producer.exited).toBe(9);
    const error = refusal(read);
    expect(error.code).toBe('TWG_IPC_STREAM_DROPPED');
    // The three batches written before the exit arrive whole: an exact prefix, nothing more claimed.
    expect(read.offsets).toEqual(range(0, 300));
    expect(read.values).toEqual(generated(0, 300));
    expect(error.message).toContain('after 300 rows');
    expect(error.message).toContain('the last row taken is offset 299');
    expect(source.cursorAt(source.partitions()[0]!, 300)).toEqual({
      kind: 'log-offset',
      nextOffset: 300,
    });
  });

  it('refuses a malformed batch with its index and the stream byte where it starts, rows before kept', async () => {
    const at = await batchStart(shape, 2);
    await stopProducers();
    const producer = await startProducer(['--tcp', '0', ...shape, '--malformed-at-batch', '2']);
    const source = new IpcStreamSource({ connection: tcp(producer.where), topic: 'live' });
    const read = await readAll(source);
    const error = refusal(read);
    expect(error.code).toBe('TWG_IPC_STREAM_INVALID');
    expect(error.batch).toBe(2);
    expect(error.position).toBe(at);
    expect(error.message).toContain(`record batch 2, stream byte ${at}`);
    expect(read.offsets).toEqual(range(0, 200));
    expect(read.values).toEqual(generated(0, 200));
  });

  for (const kind of ['tcp', 'http'] as const) {
    it(`fails loudly when the producer no longer holds the position (${kind})`, async () => {
      const producer = await startProducer([
        kind === 'tcp' ? '--tcp' : '--http',
        '0',
        ...shape,
        '--resumable',
        '--forget-below',
        '300',
      ]);
      const source = new IpcStreamSource({
        connection:
          kind === 'tcp'
            ? tcp(producer.where)
            : { kind: 'http', url: `http://127.0.0.1:${producer.where}/s` },
        topic: 'live',
        resume: true,
      });
      const read = await readAll(source);
      const error = refusal(read);
      expect(error.code).toBe('TWG_IPC_STREAM_RESUME_REFUSED');
      expect(error.message).toContain('at row 0');
      expect(error.message).toMatch(kind === 'tcp' ? /no longer retained/ : /HTTP 410/);
      expect(read.offsets).toEqual([]);
      // Refused once: a position that is gone is not asked for again.
      expect(source.stats().reconnects).toBe(0);
      expect(producer.child.exitCode).toBeNull();
    });
  }
});

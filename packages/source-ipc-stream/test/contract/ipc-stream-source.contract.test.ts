import type { Socket } from 'node:net';
import { Table, Utf8, vectorFromArray } from 'apache-arrow';
import { afterAll } from 'vitest';
import {
  describeSourceContract,
  readToEnd,
  type ExpectedRecord,
  type SourceFeatures,
  type WrittenRecord,
} from '@thalweg/contracts';
import { IpcStreamSource } from '../../src/index.js';
import { ipcStreamOf, readRequest, tcpProducer } from '../producers.js';

const producers: (() => void)[] = [];
afterAll(() => {
  for (const close of producers.splice(0)) close();
});

/**
 * One stream, one partition; rows carry no key, no header and no delete
 * marker, and a cursor may name any row (a resuming producer restarts at
 * the batch holding it, and the source drops what comes before it).
 */
const FEATURES: SourceFeatures = {
  partitions: 1,
  keys: false,
  headers: false,
  nullHeaderValues: false,
  tombstones: false,
  cursors: 'any-offset',
  offsets: 'dense',
};

/** Rows per record batch the producer writes: small, so a cursor falls inside a batch. */
const BATCH_ROWS = 3;
const text = (b: Uint8Array): string => Buffer.from(b).toString('utf8');
const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);

/** The IPC stream of `values` (one utf8 column, `value`) from row `first` on, with its end marker. */
function streamFrom(values: readonly string[], first: number): Uint8Array {
  const table = new Table({ value: vectorFromArray(values.slice(first), new Utf8()) });
  return ipcStreamOf(table, BATCH_ROWS);
}

/**
 * A producer that keeps the whole stream and implements the resume
 * handshake: it answers each connection from the start of the batch
 * holding the row asked for, so a resumed source meets duplicates of the
 * rows below its position and must drop them.
 */
async function resumableProducer(values: readonly string[], bytes?: Uint8Array) {
  const producer = await tcpProducer((socket: Socket) => {
    void readRequest(socket).then((req) => {
      const next = Math.min(req.next, values.length);
      const first = next - (next % BATCH_ROWS);
      socket.write(`${JSON.stringify({ stream: 'contract-1', first })}\n`);
      socket.end(bytes ?? streamFrom(values, first));
    });
  });
  producers.push(producer.close);
  return producer;
}

const open = (port: number) =>
  new IpcStreamSource({
    connection: { kind: 'tcp', host: '127.0.0.1', port },
    topic: 'contract',
    resume: true,
  });

describeSourceContract('IpcStreamSource, resumable, over TCP', {
  features: FEATURES,
  timeoutMs: 10_000,
  seed: async (written: readonly (readonly WrittenRecord[])[]) => {
    const records = written[0] ?? [];
    const values = records.map((r) => text(r.value));
    const producer = await resumableProducer(values);
    // Each row is a record whose value is the row as a JSON object.
    const expected: ExpectedRecord[] = records.map((r, offset) => ({
      offset,
      key: null,
      value: utf8(JSON.stringify({ value: text(r.value) })),
      headers: [],
    }));
    return {
      logs: [{ partition: { topic: 'contract', partition: 0 }, records: expected }],
      open: () => Promise.resolve(open(producer.port)),
    };
  },
  badInput: async () => {
    // The second record batch's body overwritten: a message that does not decode.
    const values = Array.from({ length: 9 }, (_, i) => `row ${String(i)}`);
    const bytes = Buffer.from(streamFrom(values, 0));
    bytes.fill(0x5a, Math.floor(bytes.byteLength / 2), Math.floor(bytes.byteLength / 2) + 48);
    const producer = await resumableProducer(values, bytes);
    const source = open(producer.port);
    return {
      run: () => readToEnd(source),
      names: ['record batch', 'stream byte'],
    };
  },
});

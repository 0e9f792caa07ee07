import { FlightError } from '../src/errors.js';
import {
  Field,
  Int64,
  RecordBatch,
  Schema,
  Struct,
  TimestampMillisecond,
  Utf8,
  makeData,
  vectorFromArray,
} from 'apache-arrow';

/** The schema of the spec's generated streams: id int64, payload utf8 (nullable), ts timestamp[ms, UTC] (nullable). */
export const ROWS_SCHEMA = new Schema([
  new Field('id', new Int64(), false),
  new Field('payload', new Utf8(), true),
  new Field('ts', new TimestampMillisecond('UTC'), true),
]);

export interface Row {
  readonly id: bigint;
  readonly payload: string | null;
  readonly ts: number | null;
}

/** One batch of `rows` in ROWS_SCHEMA, built by apache-arrow (an independent writer). */
export function rowsBatch(rows: readonly Row[]): RecordBatch {
  const [id, payload, ts] = ROWS_SCHEMA.fields as [Field, Field, Field];
  const children = [
    vectorFromArray(
      rows.map((r) => r.id),
      id.type as Int64,
    ),
    vectorFromArray(
      rows.map((r) => r.payload),
      payload.type as Utf8,
    ),
    vectorFromArray(
      rows.map((r) => r.ts),
      ts.type as TimestampMillisecond,
    ),
  ].map((v) => v.data[0]!);
  const data = makeData({
    type: new Struct(ROWS_SCHEMA.fields),
    length: rows.length,
    nullCount: 0,
    children,
  });
  return new RecordBatch(ROWS_SCHEMA, data);
}

/** The rows of a batch read back, in ROWS_SCHEMA's terms. */
export function rowsOf(batch: RecordBatch): Row[] {
  const rows: Row[] = [];
  for (let i = 0; i < batch.numRows; i += 1) {
    const ts = batch.getChildAt(2)?.get(i) as number | bigint | null;
    rows.push({
      id: batch.getChildAt(0)?.get(i) as bigint,
      payload: batch.getChildAt(1)?.get(i) as string | null,
      ts: ts === null ? null : Number(ts),
    });
  }
  return rows;
}

export const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);
export const text = (bytes: Uint8Array | null): string | null =>
  bytes === null ? null : new TextDecoder().decode(bytes);

/** What `run` throws, for assertions on its fields; fails when it returns. */
export function thrown(run: () => unknown): FlightError {
  try {
    run();
  } catch (error) {
    if (error instanceof FlightError) return error;
    throw error;
  }
  throw new Error('expected a FlightError, nothing was thrown');
}

/** A promise and its resolvers, for handlers a test settles by hand. */
export interface Deferred<T> {
  readonly promise: Promise<T>;
  readonly resolve: (value: T) => void;
  readonly reject: (error: Error) => void;
}

export function deferred<T>(): Deferred<T> {
  let resolve: (value: T) => void = () => undefined;
  let reject: (error: Error) => void = () => undefined;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** What an async iteration rejects with (a FlightError), after the items it gave. */
export async function collectUntilFailure<T>(
  items: AsyncIterable<T>,
): Promise<{ readonly items: T[]; readonly error: FlightError }> {
  const got: T[] = [];
  try {
    for await (const item of items) got.push(item);
  } catch (error) {
    if (error instanceof FlightError) return { items: got, error };
    throw error;
  }
  throw new Error(`expected a FlightError after ${got.length} items, the iteration ended`);
}

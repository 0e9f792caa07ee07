import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { flight, flightScript } from '@thalweg/test-services';
import { DataType, type RecordBatch } from 'apache-arrow';
import type { FlightClient } from '../src/flight-client.js';

const run = promisify(execFile);

/** What read_back.py prints: pyarrow's own read of a dataset or ticket. */
export interface ReadBack {
  readonly rows: number;
  readonly batches: number;
  readonly sha256: string;
}

/** pyarrow's own client reads `target` (a dataset name or a ticket object). */
export async function pyarrowReadBack(target: string | object): Promise<ReadBack> {
  const arg = typeof target === 'string' ? target : JSON.stringify(target);
  const { stdout } = await run(flight().python, [
    flightScript('read_back.py'),
    arg,
    '--url',
    flight().url,
  ]);
  return JSON.parse(stdout) as ReadBack;
}

/** One DoAction of our client whose one result is JSON. */
export async function action(client: FlightClient, type: string, body: object): Promise<unknown> {
  const results: unknown[] = [];
  for await (const r of client.doAction(type, new TextEncoder().encode(JSON.stringify(body)))) {
    results.push(JSON.parse(new TextDecoder().decode(r)));
  }
  return results[0];
}

/**
 * read_back.py's hash, over batches our client read: per column its name,
 * then one line per value (`null`; integers and timestamps in decimal;
 * strings as JSON; binary as hex).
 */
export function readBackOf(batches: readonly RecordBatch[]): ReadBack {
  const hash = createHash('sha256');
  const first = batches[0];
  let rows = 0;
  for (const b of batches) rows += b.numRows;
  if (first === undefined) return { rows, batches: 0, sha256: hash.digest('hex') };
  first.schema.fields.forEach((field, c) => {
    hash.update(`${field.name}\n`);
    for (const b of batches) {
      const column = b.getChildAt(c);
      for (let i = 0; i < b.numRows; i++)
        hash.update(`${line(field.type as DataType, column?.get(i))}\n`);
    }
  });
  return { rows, batches: batches.length, sha256: hash.digest('hex') };
}

function line(type: DataType, value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (DataType.isUtf8(type)) return JSON.stringify(value);
  if (DataType.isBinary(type)) return Buffer.from(value as Uint8Array).toString('hex');
  if (typeof value === 'bigint' || typeof value === 'number') return String(value);
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  throw new Error(`no read_back line for a value of type ${typeof value}`);
}

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SourceBatch, SourceCursor } from '@thalweg/connector-core';
import { onTestFinished } from 'vitest';
import { FileSetSource, type FileSetSourceOptions } from '../src/index.js';

/** A fresh directory under the OS temp dir, removed when the test ends. */
export async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'twg-source-files-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** Writes files named `f0`, `f1`, … (with `ext`) holding `contents`; returns the names. */
export async function writeFiles(
  dir: string,
  contents: readonly (string | Uint8Array)[],
  ext = '.ndjson',
): Promise<string[]> {
  const names = contents.map((_, i) => `f${String(i).padStart(3, '0')}${ext}`);
  for (const [i, c] of contents.entries()) await writeFile(join(dir, names[i]!), c);
  return names;
}

/** Opens a source and closes it when the test ends. */
export async function openSource(options: FileSetSourceOptions): Promise<FileSetSource> {
  const source = await FileSetSource.open(options);
  onTestFinished(() => source.close());
  return source;
}

export function ndjsonOptions(
  dir: string,
  more: Partial<Omit<FileSetSourceOptions, 'format' | 'files'>> = {},
): FileSetSourceOptions {
  return {
    files: { kind: 'directory', directory: dir, extension: '.ndjson' },
    format: 'ndjson',
    ...more,
  };
}

/** Every batch until the source ends (or `limit` batches). */
export async function collect(
  source: FileSetSource,
  limit = Number.POSITIVE_INFINITY,
  signal: AbortSignal = new AbortController().signal,
): Promise<SourceBatch[]> {
  const out: SourceBatch[] = [];
  if (limit <= 0) return out;
  for await (const batch of source.batches(signal)) {
    out.push(batch);
    if (out.length >= limit) break;
  }
  return out;
}

export function values(batches: readonly SourceBatch[]): string[] {
  return batches.flatMap((b) => b.records.map((r) => Buffer.from(r.value).toString('utf8')));
}

export function offsets(batches: readonly SourceBatch[]): number[] {
  return batches.flatMap((b) => b.records.map((r) => r.offset));
}

/** Checks spans: contiguous, each covering exactly its records. */
export function checkSpans(batches: readonly SourceBatch[], start = 0): void {
  let next = start;
  for (const b of batches) {
    if (b.span.start !== next) throw new Error(`span starts at ${b.span.start}, expected ${next}`);
    b.records.forEach((r, i) => {
      if (r.offset !== b.span.start + i) throw new Error(`record ${r.offset} out of place`);
    });
    if (b.span.end !== b.span.start + b.records.length)
      throw new Error('span end is not after the last record');
    next = b.span.end;
  }
}

/** A cursor round-tripped through JSON, as an offset store returns it. */
export function stored(cursor: SourceCursor): SourceCursor {
  return JSON.parse(JSON.stringify(cursor)) as SourceCursor;
}

export function refusal(run: () => unknown): Error {
  try {
    run();
  } catch (error) {
    if (error instanceof Error) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

export async function rejection(run: () => Promise<unknown>): Promise<Error> {
  try {
    await run();
  } catch (error) {
    if (error instanceof Error) return error;
    throw error;
  }
  throw new Error('expected a rejection');
}

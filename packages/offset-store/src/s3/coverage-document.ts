import type { SinkId, SourceCursor } from '@thalweg/connector-core';
import { checkRange } from '../covered-range.js';
import { laterCursor } from '../cursor-check.js';
import { CoverageError } from '../errors.js';
import { RangeSet } from '../range-set.js';

export const DOCUMENT_VERSION = 1;

/**
 * The one object per sink that holds its coverage:
 * `{ format, version, sink, destinations: [{ topic, partition, ranges: [[start, end], ...] }] }`.
 * Small (proportional to the number of gaps) and rewritten whole under a
 * compare-and-swap on its ETag.
 */
export interface CoverageDocument {
  readonly sink: SinkId;
  readonly destinations: Map<string, { topic: string; partition: number; set: RangeSet }>;
}

export interface CursorDocument {
  readonly source: string;
  readonly cursors: Map<string, { topic: string; partition: number; cursor: SourceCursor }>;
}

export function destinationId(topic: string, partition: number): string {
  return `${topic}\u0000${partition}`;
}

export function encodeCoverage(doc: CoverageDocument): string {
  return JSON.stringify({
    format: 'thalweg.coverage',
    version: DOCUMENT_VERSION,
    sink: doc.sink,
    destinations: [...doc.destinations.values()].map((d) => ({
      topic: d.topic,
      partition: d.partition,
      ranges: d.set.ranges().map((r) => [r.start, r.end]),
    })),
  });
}

/** Parses and validates a stored coverage object; anything off is corruption, named by object. */
export function decodeCoverage(body: string, sink: SinkId, where: string): CoverageDocument {
  const raw = parse(body, where);
  checkHeader(raw, 'thalweg.coverage', where);
  if (raw['sink'] !== sink)
    corrupt(where, `belongs to sink ${JSON.stringify(raw['sink'])}, not "${sink}"`);
  const list = raw['destinations'];
  if (!Array.isArray(list)) corrupt(where, 'has no destinations array');
  const destinations = new Map<string, { topic: string; partition: number; set: RangeSet }>();
  for (const d of list as unknown[]) {
    const e = d as Record<string, unknown>;
    const topic = e['topic'];
    const partition = e['partition'];
    const ranges = e['ranges'];
    if (typeof topic !== 'string' || !Number.isSafeInteger(partition) || !Array.isArray(ranges)) {
      corrupt(where, 'has a destination without topic, partition or ranges');
    }
    // A destination listed twice is unioned: replacing would drop recorded ranges.
    const id = destinationId(topic, partition as number);
    const set = destinations.get(id)?.set ?? new RangeSet();
    for (const r of ranges as unknown[]) {
      if (!Array.isArray(r) || r.length !== 2)
        corrupt(where, `has a range that is not [start, end] in ${topic}`);
      const [start, end] = r as [number, number];
      try {
        checkRange(start, end, `${where} ${topic}/${String(partition)}`);
      } catch (cause) {
        throw new CoverageError('TWG_COVERAGE_CORRUPT', `${where} holds an invalid range`, cause);
      }
      set.add(start, end);
    }
    destinations.set(id, {
      topic,
      partition: partition as number,
      set,
    });
  }
  return { sink, destinations };
}

export function encodeCursors(doc: CursorDocument): string {
  return JSON.stringify({
    format: 'thalweg.cursors',
    version: DOCUMENT_VERSION,
    source: doc.source,
    cursors: [...doc.cursors.values()],
  });
}

export function decodeCursors(body: string, source: string, where: string): CursorDocument {
  const raw = parse(body, where);
  checkHeader(raw, 'thalweg.cursors', where);
  const list = raw['cursors'];
  if (raw['source'] !== source || !Array.isArray(list))
    corrupt(where, 'is not the cursor object of this source');
  const cursors = new Map<string, { topic: string; partition: number; cursor: SourceCursor }>();
  for (const c of list as { topic: string; partition: number; cursor: SourceCursor }[]) {
    if (typeof c.topic !== 'string' || typeof c.cursor !== 'object')
      corrupt(where, 'holds a malformed cursor');
    // Of a partition listed twice, the later cursor (a cursor never moves back).
    const id = destinationId(c.topic, c.partition);
    const seen = cursors.get(id);
    if (seen === undefined || laterCursor(seen.cursor, c.cursor) === c.cursor) cursors.set(id, c);
  }
  return { source, cursors };
}

function parse(body: string, where: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(body);
    if (typeof value === 'object' && value !== null && !Array.isArray(value))
      return value as Record<string, unknown>;
  } catch (cause) {
    throw new CoverageError(
      'TWG_COVERAGE_CORRUPT',
      `${where} is not JSON; it was left untouched`,
      cause,
    );
  }
  return corrupt(where, 'is not a JSON object');
}

function checkHeader(raw: Record<string, unknown>, format: string, where: string): void {
  if (raw['format'] !== format) corrupt(where, `is not a ${format} object`);
  const version = raw['version'];
  if (typeof version !== 'number') corrupt(where, 'has no version');
  if (version > DOCUMENT_VERSION) {
    throw new CoverageError(
      'TWG_COVERAGE_SCHEMA_NEWER',
      `${where} has format version ${version}; this code knows ${DOCUMENT_VERSION} and will not rewrite it`,
    );
  }
}

function corrupt(where: string, what: string): never {
  throw new CoverageError('TWG_COVERAGE_CORRUPT', `${where} ${what}; it was left untouched`);
}

import {
  formatSpan,
  partitionKey,
  type Source,
  type SourceBatch,
  type SourceCursor,
  type SourcePartition,
  type StoreManagedSource,
} from '@thalweg/connector-core';
import { BatchCollector } from './batch-collector.js';
import { check, ContractViolation, describeError, isCoded, outcome } from './errors.js';

import { sourceContractRecords } from './source-records.js';
import type {
  ExpectedLog,
  ExpectedRecord,
  SourceContractFactory,
  SourceFeatures,
  SourceFixture,
} from './source-subject.js';

/** One clause of the source contract, runnable on its own. */
export interface SourceContractCase {
  readonly name: string;
  applies(factory: SourceContractFactory): boolean;
  run(factory: SourceContractFactory): Promise<void>;
}

const limit = (f: SourceContractFactory): number => (f.timeoutMs ?? 30_000) / 2;

async function withFixture(
  factory: SourceContractFactory,
  body: (fixture: SourceFixture, opened: (s: Source) => Source) => Promise<void>,
): Promise<void> {
  const fixture = await factory.seed(sourceContractRecords(factory.features));
  const sources: Source[] = [];
  try {
    await body(fixture, (s) => {
      sources.push(s);
      return s;
    });
  } finally {
    for (const s of sources) await s.close().catch(() => undefined);
    await fixture.dispose?.();
  }
}

const hex = (b: Uint8Array | null): string =>
  b === null ? 'null' : Buffer.from(b).toString('hex');

function describeRecord(r: Omit<ExpectedRecord, 'offset'>): string {
  const headers = r.headers.map(([n, v]) => `${n}=${hex(v)}`).join(',');
  return `key ${hex(r.key)} value ${hex(r.value)} headers [${headers}] tombstone ${r.tombstone === true}`;
}

/** Records delivered per partition, in delivery order. */
function delivered(batches: readonly SourceBatch[]): Map<string, ExpectedRecord[]> {
  const out = new Map<string, ExpectedRecord[]>();
  for (const b of batches) {
    const key = partitionKey(b.span);
    const list = out.get(key) ?? [];
    out.set(key, list);
    for (const r of b.records) list.push({ ...r, offset: r.offset });
  }
  return out;
}

/**
 * Every batch: a valid span whose records lie inside it in strictly
 * increasing offsets, and per partition, spans that follow one another
 * with no gap and no overlap (the position a batch leads to is its end),
 * starting at `from` where given. Where offsets are sparse, a span may
 * start past where the one before it ended (or past `from`), never before.
 */
function checkOrder(
  clause: string,
  offsets: SourceFeatures['offsets'],
  batches: readonly SourceBatch[],
  from?: ReadonlyMap<string, number>,
): void {
  const ends = new Map<string, number>();
  for (const b of batches) {
    const span = formatSpan(b.span);
    const key = partitionKey(b.span);
    check(b.span.end > b.span.start, clause, () => `batch span ${span} is empty`);
    let last = b.span.start - 1;
    for (const r of b.records) {
      check(
        r.offset > last && r.offset < b.span.end,
        clause,
        () => `record ${r.offset} is out of place in ${span} (after ${last})`,
      );
      check(
        Number.isFinite(r.timestamp),
        clause,
        () => `record ${r.offset} of ${span} has timestamp ${r.timestamp}`,
      );
      last = r.offset;
    }
    const prev = ends.get(key) ?? from?.get(key);
    check(
      prev === undefined || b.span.start === prev || (offsets === 'sparse' && b.span.start > prev),
      clause,
      () =>
        `${span} follows a span that ended at ${prev}` +
        (offsets === 'sparse' ? ' (it starts before that end)' : ''),
    );
    ends.set(key, b.span.end);
  }
}

function sameRecord(a: ExpectedRecord, b: ExpectedRecord): boolean {
  return describeRecord(a) === describeRecord(b) && a.offset === b.offset;
}

/** What arrived for each log equals the expected records from `from` (per partition) on, in order. */
function checkContents(
  clause: string,
  logs: readonly ExpectedLog[],
  batches: readonly SourceBatch[],
  from: (log: ExpectedLog) => number,
): void {
  const got = delivered(batches);
  for (const log of logs) {
    const key = partitionKey(log.partition);
    const want = log.records.filter((r) => r.offset >= from(log));
    const have = got.get(key) ?? [];
    const name = `${log.partition.topic}/${log.partition.partition}`;
    check(
      have.length === want.length,
      clause,
      () =>
        `${name}: ${have.length} records delivered, ${want.length} expected (offsets ${have.map((r) => r.offset).join(',')})`,
    );
    have.forEach((h, i) => {
      const w = want[i];
      if (w === undefined) return;
      check(
        sameRecord(h, w),
        clause,
        () =>
          `${name} offset ${w.offset}: delivered offset ${h.offset} ${describeRecord(h)}; written ${describeRecord(w)}`,
      );
    });
    got.delete(key);
  }
  check(
    got.size === 0,
    clause,
    () => `batches of partitions never written: ${[...got.keys()].join(', ')}`,
  );
}

const allArrived =
  (logs: readonly ExpectedLog[], from: (log: ExpectedLog) => number) =>
  (c: BatchCollector): boolean => {
    const got = delivered(c.batches);
    return logs.every((log) => {
      const want = log.records.filter((r) => r.offset >= from(log));
      const last = want.at(-1);
      return (
        last === undefined ||
        (got.get(partitionKey(log.partition)) ?? []).some((r) => r.offset >= last.offset)
      );
    });
  };

async function readAll(
  factory: SourceContractFactory,
  clause: string,
  source: Source,
  logs: readonly ExpectedLog[],
  from: (log: ExpectedLog) => number,
): Promise<SourceBatch[]> {
  const collector = new BatchCollector(source);
  await collector.until(
    allArrived(logs, from),
    clause,
    'every written record arrived',
    limit(factory),
  );
  collector.controller.abort();
  await collector.end(clause, limit(factory));
  return collector.batches;
}

const inOrder: SourceContractCase = {
  name: 'delivers every record once, in offset order per partition, as written (keys, headers, tombstones)',
  applies: () => true,
  run: (factory) =>
    withFixture(factory, async (fixture, opened) => {
      const clause = 'records are delivered in position order, exactly as written';
      const source = opened(await fixture.open());
      const batches = await readAll(factory, clause, source, fixture.logs, () => 0);
      checkOrder(
        clause,
        factory.features.offsets,
        batches,
        new Map(fixture.logs.map((l) => [partitionKey(l.partition), 0])),
      );
      checkContents(clause, fixture.logs, batches, () => 0);
    }),
};

/** The resume point of a log: the middle record, or the end of a delivered batch nearest it. */
function resumePoint(
  factory: SourceContractFactory,
  log: ExpectedLog,
  batches: readonly SourceBatch[],
): number {
  const middle = log.records[Math.floor(log.records.length / 2)]?.offset ?? 0;
  if (factory.features.cursors === 'any-offset') return middle;
  const ends = batches
    .filter((b) => partitionKey(b.span) === partitionKey(log.partition))
    .map((b) => b.span.end);
  const inside = ends.filter((e) => e < (log.records.at(-1)?.offset ?? 0));
  if (inside.length === 0) {
    throw new ContractViolation(
      'resume',
      `${formatSpan({ ...log.partition, start: 0, end: 1 })}: the fixture delivered one batch; give it smaller batches so a cursor can fall inside the log`,
    );
  }
  return inside.reduce((best, e) => (Math.abs(e - middle) < Math.abs(best - middle) ? e : best));
}

const resumes: SourceContractCase = {
  name: 'resumes from a committed position with the records after it and nothing before',
  applies: () => true,
  run: (factory) =>
    withFixture(factory, async (fixture, opened) => {
      const clause = 'a resumed source delivers exactly what follows its position';
      const first = opened(await fixture.open());
      const seen = await readAll(factory, clause, first, fixture.logs, () => 0);
      const points = new Map(
        fixture.logs.map((l) => [partitionKey(l.partition), resumePoint(factory, l, seen)]),
      );
      const at = (log: ExpectedLog): number => points.get(partitionKey(log.partition)) ?? 0;
      let second: Source;
      if (first.regime === 'store-managed') {
        // Cursors come back from the offset store as JSON.
        const cursors = fixture.logs.map(
          (l) =>
            [
              l.partition,
              JSON.parse(JSON.stringify(first.cursorAt(l.partition, at(l)))) as SourceCursor,
            ] as const,
        );
        await first.close();
        second = opened(await fixture.open());
        check(
          second.regime === 'store-managed',
          clause,
          () => 'the fixture opened a source of another regime',
        );
        for (const [partition, cursor] of cursors) second.seek(partition, cursor);
      } else {
        for (const l of fixture.logs) await first.commit(l.partition, at(l));
        await first.close();
        second = opened(await fixture.open());
      }
      const batches = await readAll(factory, clause, second, fixture.logs, at);
      checkOrder(clause, factory.features.offsets, batches, points);
      checkContents(clause, fixture.logs, batches, at);
    }),
};

const closes: SourceContractCase = {
  name: 'an abort ends the iteration; close ends a running one and can be called again',
  applies: () => true,
  run: (factory) =>
    withFixture(factory, async (fixture, opened) => {
      const clause = 'abort and close end what they should';
      const aborted = opened(await fixture.open());
      const a = new BatchCollector(aborted);
      await a.until((c) => c.batches.length > 0, clause, 'a batch arrived', limit(factory));
      a.controller.abort();
      await a.end(clause, limit(factory));
      check(
        a.failure === undefined,
        clause,
        () => `the aborted iteration failed: ${describeError(a.failure)}`,
      );
      const closing = opened(await fixture.open());
      const c = new BatchCollector(closing);
      await c.until((k) => k.batches.length > 0, clause, 'a batch arrived', limit(factory));
      const closed = await outcome(closing.close());
      check(
        closed.ok,
        clause,
        () => `close rejected: ${closed.ok ? '' : describeError(closed.error)}`,
      );
      const before = c.batches.length;
      await c.end(clause, limit(factory));
      check(
        c.batches.length === before,
        clause,
        () => `${c.batches.length - before} batches were yielded after close() resolved`,
      );
      check(
        c.failure === undefined,
        clause,
        () => `the iteration failed on close: ${describeError(c.failure)}`,
      );
      const again = await outcome(closing.close());
      check(
        again.ok,
        clause,
        () => `a second close rejected: ${again.ok ? '' : describeError(again.error)}`,
      );
    }),
};

const foreignPartition: SourcePartition = { topic: 'contract-never-written', partition: 7 };

/** Runs `act`, which must throw or reject with a coded error. */
async function refused(clause: string, what: string, act: () => unknown): Promise<void> {
  let error: unknown = undefined;
  try {
    await act();
  } catch (e) {
    error = e;
  }
  check(error !== undefined, clause, () => `${what} was accepted`);
  check(isCoded(error), clause, () => `${what} was refused with ${describeError(error)}`);
}

/** The kind of the cursor `source` gives for `partition` at 0, or undefined when it gives none. */
function ownKindAt0(
  source: StoreManagedSource,
  partition: SourcePartition,
): SourceCursor['kind'] | undefined {
  try {
    return source.cursorAt(partition, 0).kind;
  } catch {
    return undefined;
  }
}

const badPosition: SourceContractCase = {
  name: 'a position it cannot take is refused with a coded error',
  applies: () => true,
  run: (factory) =>
    withFixture(factory, async (fixture, opened) => {
      const clause = 'a bad position is refused, loudly';
      const source = opened(await fixture.open());
      const own = fixture.logs[0]?.partition;
      check(own !== undefined, clause, () => 'the fixture has no partition');
      if (source.regime === 'store-managed') {
        await refused(clause, 'cursorAt of a partition it does not read', () =>
          source.cursorAt(foreignPartition, 0),
        );
        await refused(clause, 'cursorAt of a negative offset', () => source.cursorAt(own, -1));
        // A cursor of a kind this source does not make: a stream token, unless
        // its own cursor at 0 is one (a resumable stream's). A source that can
        // give no cursor before it delivered anything (a Pulsar reader: no
        // message id yet) does not make stream tokens.
        const foreign: SourceCursor =
          ownKindAt0(source, own) === 'stream-token'
            ? { kind: 'log-offset', nextOffset: 1 }
            : { kind: 'stream-token', token: 'x', nextOffset: 1 };
        await refused(clause, 'seek to a cursor of a foreign kind', () =>
          source.seek(own, foreign),
        );
        await refused(clause, 'seek of a partition it does not read', () =>
          source.seek(foreignPartition, source.cursorAt(own, 0)),
        );
      } else {
        await refused(clause, 'commit of a negative offset', () => source.commit(own, -1));
      }
    }),
};

const badInput: SourceContractCase = {
  name: 'bad input is refused with a coded error naming where it is',
  applies: (f) => f.badInput !== undefined,
  run: async (factory) => {
    const clause = 'bad input names its place';
    const make = factory.badInput;
    check(make !== undefined, clause, () => 'the factory has no badInput');
    const bad = await make();
    const result = await outcome(bad.run());
    check(!result.ok, clause, () => 'the bad input was accepted');
    check(isCoded(result.error), clause, () => `refused with ${describeError(result.error)}`);
    const message = result.error instanceof Error ? result.error.message : '';
    for (const name of bad.names)
      check(message.includes(name), clause, () => `the error does not name ${name}: ${message}`);
  },
};

/** Every clause of the source contract, in the order the suite runs them. */
export const SOURCE_CONTRACT_CASES: readonly SourceContractCase[] = [
  inOrder,
  resumes,
  closes,
  badPosition,
  badInput,
];

import { sinkId, type ConfigError, type ConfirmTarget } from '@thalweg/connector-core';
import { InMemoryCoverage } from '@thalweg/offset-store';
import { describe, expect, it } from 'vitest';
import { Pipeline, secondary } from '../src/index.js';
import { jsonRows, MemoryRawSink, MemorySecondary } from './doubles/memory-sinks.js';
import { logsOf, MemoryStoreSource } from './doubles/memory-sources.js';
import { until } from './doubles/waits.js';

const coverage = () => new InMemoryCoverage({ sinks: [sinkId('raw'), sinkId('sec')] });

async function refusal(open: () => Promise<unknown>): Promise<ConfigError> {
  try {
    await open();
  } catch (error) {
    return error as ConfigError;
  }
  throw new Error('expected a refusal');
}

describe('topology validation', () => {
  const source = () => new MemoryStoreSource(logsOf('t', 1, 10), 5);

  it('refuses a primary raw that cannot confirm durability, naming the path', async () => {
    const error = await refusal(() =>
      Pipeline.open({
        source: source(),
        coverage: coverage(),
        primaryRaw: (confirm) => {
          const raw = new MemoryRawSink(confirm);
          Object.assign(raw, {
            descriptor: { ...raw.descriptor, durability: { kind: 'none', reason: 'memory only' } },
          });
          return raw;
        },
      }),
    );
    expect(error.path).toBe('primaryRaw.durability');
    expect(error.message).toMatch(/memory only/);
  });

  it('refuses a primary raw that cannot be read back', async () => {
    const error = await refusal(() =>
      Pipeline.open({
        source: source(),
        coverage: coverage(),
        primaryRaw: (confirm) => {
          const raw = new MemoryRawSink(confirm);
          Object.assign(raw, {
            descriptor: { ...raw.descriptor, recovery: { kind: 'write-only' } },
          });
          return raw;
        },
      }),
    );
    expect(error.path).toBe('primaryRaw.recovery');
  });

  it('refuses a non-replayable source whose producer cannot resume', async () => {
    const s = source();
    Object.assign(s, { origin: { kind: 'non-replayable', resumable: false } });
    const error = await refusal(() =>
      Pipeline.open({ source: s, coverage: coverage(), primaryRaw: (c) => new MemoryRawSink(c) }),
    );
    expect(error.path).toBe('source.origin');
    expect(error.message).toMatch(
      /config\.acceptLossWindow: 'records-received-not-yet-durable-in-raw'/,
    );
  });

  it('runs it once the config accepts its loss window by name, and counts that window', async () => {
    const unresumable = () =>
      Object.assign(source(), { origin: { kind: 'non-replayable', resumable: false } as const });
    const wrong = await refusal(() =>
      Pipeline.open({
        source: unresumable(),
        coverage: coverage(),
        // @ts-expect-error: only the exact words accept the window (as from untyped configuration)
        config: { acceptLossWindow: 'yes' },
        primaryRaw: (c) => new MemoryRawSink(c),
      }),
    );
    expect(wrong.path).toBe('config.acceptLossWindow');
    const raw: MemoryRawSink[] = [];
    const pipeline = await Pipeline.open({
      source: unresumable(),
      coverage: coverage(),
      config: { acceptLossWindow: 'records-received-not-yet-durable-in-raw' },
      primaryRaw: (c) => {
        raw.push(new MemoryRawSink(c, [], 'raw'));
        raw[0]!.mode = 'manual';
        return raw[0]!;
      },
    });
    const running = pipeline.run();
    // Raw holds back its acknowledgements: all ten read, none durable, all ten at risk.
    await until(() => pipeline.stats().source.records === 10);
    expect(pipeline.stats().source.lossWindowRecords).toBe(10);
    await raw[0]!.ack(1);
    await until(() => pipeline.stats().source.lossWindowRecords === 5);
    await raw[0]!.ack();
    const stats = await running;
    expect(stats.source.lossWindowRecords).toBe(0);
  });

  it('reports no loss window for a source that reads again what it lost', async () => {
    const stats = await (
      await Pipeline.open({
        source: source(),
        coverage: coverage(),
        primaryRaw: (c) => new MemoryRawSink(c),
      })
    ).run();
    expect(stats.source.lossWindowRecords).toBeNull();
  });

  it('refuses a non-durable secondary unless its config opts out explicitly', async () => {
    const spec = (config: object) => ({
      source: source(),
      coverage: coverage(),
      config,
      primaryRaw: (c: ConfirmTarget<'primary-raw'>) => new MemoryRawSink(c),
      secondaries: [
        secondary({
          open: (c) => new MemorySecondary(c, 'sec', { kind: 'none', reason: 'fire and forget' }),
          derive: jsonRows,
        }),
      ],
    });
    const error = await refusal(() => Pipeline.open(spec({})));
    expect(error.path).toBe('secondaries[0].durability');
    const opened = await Pipeline.open(spec({ secondaries: { sec: { allowNonDurable: true } } }));
    const stats = await opened.run();
    expect(stats.secondaries[0]?.deliveredRecords).toBe(10);
  });

  it('refuses duplicate sink ids and settings for a secondary that does not exist', async () => {
    const dup = await refusal(() =>
      Pipeline.open({
        source: source(),
        coverage: coverage(),
        primaryRaw: (c) => new MemoryRawSink(c),
        secondaries: [secondary({ open: (c) => new MemorySecondary(c, 'raw'), derive: jsonRows })],
      }),
    );
    expect(dup.path).toBe('secondaries[0].id');
    const typo = await refusal(() =>
      Pipeline.open({
        source: source(),
        coverage: coverage(),
        config: { secondaries: { sce: { maxQueuedBatches: 4 } } },
        primaryRaw: (c) => new MemoryRawSink(c),
        secondaries: [secondary({ open: (c) => new MemorySecondary(c, 'sec'), derive: jsonRows })],
      }),
    );
    expect(typo.path).toBe('config.secondaries.sce');
  });

  it('refuses bad config fields with their path', async () => {
    const bad = await refusal(() =>
      Pipeline.open({
        source: source(),
        coverage: coverage(),
        config: { granularity: 'message' as 'batch', flowControl: { byteBudget: { bytes: -1 } } },
        primaryRaw: (c) => new MemoryRawSink(c),
      }),
    );
    expect(bad.path).toBe('config.granularity');
    expect(bad.message).toMatch(/config\.flowControl\.byteBudget\.bytes/);
  });

  it('refuses a raw of another cluster than the source, releasing everything it opened', async () => {
    const s = source();
    const store = coverage();
    let raw: MemoryRawSink | undefined;
    const error = await refusal(() =>
      Pipeline.open({
        source: s,
        coverage: store,
        primaryRaw: (c) => {
          raw = new MemoryRawSink(c);
          raw.cluster = 'prod-us';
          return raw;
        },
      }),
    );
    expect(error.code).toBe('TWG_CONFIG_INVALID');
    expect(error.path).toBe('primaryRaw.cluster');
    expect(error.reason).toMatch(/"prod-us".*"memory"/);
    expect(raw?.closed).toBe(true);
    expect(s.closed).toBe(true);
    await expect(
      store.gaps({ sink: sinkId('raw'), topic: 't', partition: 0 }, 0, 1),
    ).rejects.toThrow(/TWG_COVERAGE_CLOSED/);
  });

  it('refuses a coverage store that does not keep coverage for a durable secondary', async () => {
    const s = source();
    let sec: MemorySecondary | undefined;
    const error = await refusal(() =>
      Pipeline.open({
        source: s,
        coverage: new InMemoryCoverage({ sinks: [sinkId('raw')] }),
        primaryRaw: (c) => new MemoryRawSink(c),
        secondaries: [
          secondary({ open: (c) => (sec = new MemorySecondary(c, 'sec')), derive: jsonRows }),
        ],
      }),
    );
    expect(error.path).toBe('coverage.sinks');
    expect(error.reason).toMatch(/"sec" \(secondaries\[0\]\)/);
    expect(sec?.closed).toBe(true);
    expect(s.closed).toBe(true);
    // Nor raw's own id: raw's coverage is recorded too.
    const noRaw = await refusal(() =>
      Pipeline.open({
        source: source(),
        coverage: new InMemoryCoverage({ sinks: [sinkId('sec')] }),
        primaryRaw: (c) => new MemoryRawSink(c),
      }),
    );
    expect(noRaw.reason).toMatch(/"raw" \(primaryRaw\)/);
    // A non-durable secondary records no coverage, so the store need not know it.
    const opened = await Pipeline.open({
      source: source(),
      coverage: new InMemoryCoverage({ sinks: [sinkId('raw')] }),
      config: { secondaries: { sec: { allowNonDurable: true } } },
      primaryRaw: (c) => new MemoryRawSink(c),
      secondaries: [
        secondary({
          open: (c) => new MemorySecondary(c, 'sec', { kind: 'none', reason: 'best effort' }),
          derive: jsonRows,
        }),
      ],
    });
    expect((await opened.run()).raw.durableRecords).toBe(10);
  });

  it('closes the sinks it opened when validation refuses the topology', async () => {
    let raw: MemoryRawSink | undefined;
    await refusal(() =>
      Pipeline.open({
        source: source(),
        coverage: coverage(),
        primaryRaw: (c) => (raw = new MemoryRawSink(c)),
        secondaries: [secondary({ open: (c) => new MemorySecondary(c, 'raw'), derive: jsonRows })],
      }),
    );
    expect(raw?.closed).toBe(true);
  });
});

describe('types', () => {
  // The assertions here are the @ts-expect-error lines: `tsc -b` typechecks
  // this file and fails if either pairing ever compiles.
  it('a secondary whose derivation does not produce what its sink takes does not compile', () => {
    const notRows = () => ({ batch: 'not rows', quarantined: [] });
    // The sink takes MemoryRow[]; the derivation produces strings.
    // prettier-ignore
    // @ts-expect-error the derivation does not produce what the sink takes
    secondary({ open: (c) => new MemorySecondary(c, 'sec'), derive: notRows });
    // @ts-expect-error a secondary's confirm target cannot open a primary-raw sink
    const wrongLane = secondary({ open: (c) => new MemoryRawSink(c), derive: jsonRows });
    // At run time `secondary` only ties the two together; it changes nothing.
    expect(wrongLane.derive).toBe(jsonRows);
  });
});

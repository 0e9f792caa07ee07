import { describe, expect, it } from 'vitest';
import {
  kafkaSource,
  KafkaSourceError,
  type DroppedCommit,
  type KafkaGroupOptions,
} from '../src/index.js';
import { deferred, FakeConsumer, tick } from './fake-consumer.js';
import { BatchCollector, quiet, text } from './helpers.js';

// The group-mode rules, played against a scripted client: every rebalance,
// crash and commit answer is injected through the client seam.

const P = (partition: number) => ({ topic: 't', partition });

function setup(extra: Partial<KafkaGroupOptions> = {}) {
  const { factory, consumer } = FakeConsumer.factory();
  const dropped: DroppedCommit[] = [];
  const source = kafkaSource({
    mode: 'group',
    brokers: ['127.0.0.1:9092'],
    cluster: 'c',
    topics: ['t'],
    groupId: 'g',
    log: quiet,
    kafka: factory,
    onDroppedCommit: (d) => dropped.push(d),
    ...extra,
  });
  const heard: string[] = [];
  source.onAssignment((e) => {
    heard.push(`${e.kind} ${e.partitions.map((p) => p.partition).join(',')}`);
  });
  const collector = new BatchCollector(source);
  return { source, consumer, dropped, heard, collector };
}

/** Starts the source's reader: connect, subscribe, run. */
async function started(s: ReturnType<typeof setup>) {
  await s.collector.yieldable();
  expect(s.consumer.take()).toEqual(['connect', 'subscribe', 'run']);
}

const spans = (c: BatchCollector) =>
  c.batches.map((b) => `${b.span.partition}[${b.span.start},${b.span.end})`);

describe('KafkaGroupSource rebalances', () => {
  it('purges revoked partitions, tells revoked before assigned, and yields nothing while a rejoin runs', async () => {
    const s = setup();
    await started(s);
    s.consumer.join([P(0), P(1)]);
    s.consumer.deliver(P(0), 0, 3);
    s.consumer.deliver(P(0), 3, 3);
    s.consumer.deliver(P(1), 0, 3);
    s.consumer.emit({ kind: 'rebalancing' });
    expect(await s.collector.yieldable()).toEqual([]);
    expect(s.source.stats().queuedBatches).toBe(3);

    s.consumer.emit({ kind: 'join-starting' });
    s.consumer.emit({ kind: 'joined', assignment: [P(1), P(2)] });
    expect(s.heard).toEqual(['assigned 0,1', 'revoked 0', 'assigned 2']);
    expect(s.source.stats()).toMatchObject({ purgedBatches: 2, queuedBatches: 1, joins: 2 });
    // The kept partition resumes after what was queued, not from the committed offset.
    expect(s.consumer.take()).toContain('seek t/1 3');

    s.consumer.emit({ kind: 'fetching' });
    s.consumer.deliver(P(2), 0, 2);
    await s.collector.until((c) => c.batches.length >= 2);
    expect(spans(s.collector)).toEqual(['1[0,3)', '2[0,2)']);
    await s.source.close();
  });

  it('drops what the client re-delivers below the queued end after a rejoin', async () => {
    const s = setup();
    await started(s);
    s.consumer.join([P(0)]);
    s.consumer.deliver(P(0), 0, 3);
    s.consumer.join([P(0)]);
    // kafkajs restarted from the committed offset (0) before the seek applied.
    s.consumer.deliver(P(0), 0, 5);
    s.consumer.deliver(P(5), 0, 5);
    await s.collector.until((c) => c.batches.length >= 2);
    expect(spans(s.collector)).toEqual(['0[0,3)', '0[3,5)']);
    expect(s.collector.batches[1]?.records.map((r) => r.offset)).toEqual([3, 4]);
    expect(s.source.stats()).toMatchObject({ skippedRecords: 3, staleBatches: 1 });
    await s.source.close();
  });

  it('turns a fetch of only filtered records into an empty batch that keeps its span', async () => {
    const s = setup();
    await started(s);
    s.consumer.join([P(0)]);
    s.consumer.emit({
      kind: 'filtered-batch',
      batch: {
        topic: 't',
        partition: 0,
        firstOffset: '0',
        lastOffset: '2',
        highWatermark: '3',
        kind: 'messages',
        messages: [],
      },
    });
    s.consumer.deliver(P(0), 3, 1);
    await s.collector.until((c) => c.batches.length >= 2);
    const first = s.collector.batches[0];
    expect({ span: first?.span, records: first?.records }).toEqual({
      span: { topic: 't', partition: 0, start: 0, end: 3 },
      records: [],
    });
    expect(spans(s.collector)).toEqual(['0[0,3)', '0[3,4)']);
    expect(s.source.stats().emptyBatches).toBe(1);
    await s.source.close();
  });
});

describe('KafkaGroupSource commits', () => {
  it('wait while a rejoin runs, then go out for partitions still owned and are dropped for the others', async () => {
    const s = setup();
    await started(s);
    s.consumer.join([P(0), P(1)]);
    expect(await s.source.tryCommit(P(0), 5)).toEqual({ kind: 'committed' });

    s.consumer.emit({ kind: 'join-starting' });
    const lost = s.source.tryCommit(P(0), 7);
    const kept = s.source.tryCommit(P(1), 3);
    await tick();
    s.consumer.emit({ kind: 'joined', assignment: [P(1)] });
    await tick();
    // kafkajs drops commits silently until its fetch loop runs: still waiting.
    expect(s.consumer.commits).toHaveLength(1);
    s.consumer.emit({ kind: 'fetching' });
    expect(await lost).toMatchObject({ kind: 'dropped', reason: 'not-owned' });
    expect(await kept).toEqual({ kind: 'committed' });
    expect(s.consumer.commits).toEqual([
      [{ topic: 't', partition: 0, next: 5 }],
      [{ topic: 't', partition: 1, next: 3 }],
    ]);
    expect(s.dropped).toEqual([
      expect.objectContaining({ partition: P(0), next: 7, reason: 'not-owned' }),
    ]);
    await s.source.close();
  });

  it('reads ownership-changed and not-running answers as drops, and a failed request as a retryable error', async () => {
    const s = setup();
    await started(s);
    s.consumer.join([P(0)]);
    s.consumer.answer = async () => ({
      kind: 'ownership-changed',
      detail: 'the broker answered REBALANCE_IN_PROGRESS',
    });
    expect(await s.source.tryCommit(P(0), 1)).toEqual({
      kind: 'dropped',
      reason: 'ownership-changed',
      detail: 'the broker answered REBALANCE_IN_PROGRESS',
    });
    s.consumer.answer = async () => ({ kind: 'not-running', detail: 'nothing sent' });
    expect(await s.source.tryCommit(P(0), 2)).toMatchObject({
      kind: 'dropped',
      reason: 'not-running',
    });
    s.consumer.answer = () => Promise.reject(new Error('connection reset'));
    const failure = await s.source.commit(P(0), 3).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(KafkaSourceError);
    expect(failure).toMatchObject({ code: 'TWG_KAFKA_COMMIT_FAILED', canRetry: true });
    expect((failure as Error).message).toMatch(/t\/0@3 failed: connection reset/);
    s.consumer.answer = async () => ({ kind: 'applied' });
    expect(await s.source.tryCommit(P(0), 3)).toEqual({ kind: 'committed' });
    expect(s.source.stats()).toMatchObject({
      commits: 1,
      commitRequests: 4,
      droppedCommits: { 'ownership-changed': 1, 'not-running': 1 },
    });
    await s.source.close();
  });

  it('coalesces commits behind a request in flight into one request, and never goes back', async () => {
    const s = setup();
    await started(s);
    s.consumer.join([P(0), P(1)]);
    const first = deferred<{ kind: 'applied' }>();
    s.consumer.answer = () => first.promise;
    const c1 = s.source.tryCommit(P(0), 5);
    await tick();
    s.consumer.answer = async () => ({ kind: 'applied' });
    const rest = [
      s.source.tryCommit(P(0), 8),
      s.source.tryCommit(P(0), 6),
      s.source.tryCommit(P(1), 2),
    ];
    first.resolve({ kind: 'applied' });
    expect(await Promise.all([c1, ...rest])).toEqual(Array(4).fill({ kind: 'committed' }));
    expect(s.consumer.commits).toEqual([
      [{ topic: 't', partition: 0, next: 5 }],
      [
        { topic: 't', partition: 0, next: 8 },
        { topic: 't', partition: 1, next: 2 },
      ],
    ]);
    expect(await s.source.tryCommit(P(0), 7)).toMatchObject({ kind: 'dropped', reason: 'behind' });
    expect(await s.source.tryCommit(P(0), 8)).toEqual({ kind: 'committed' });
    expect(s.consumer.commits).toHaveLength(2);
    // A partition this member keeps across a rejoin keeps its floor.
    s.consumer.join([P(0)]);
    expect(await s.source.tryCommit(P(0), 6)).toMatchObject({ kind: 'dropped', reason: 'behind' });
    await s.source.close();
  });

  it('refuses a commit beyond the end of what was yielded: the position would lead', async () => {
    const s = setup();
    await started(s);
    s.consumer.join([P(0)]);
    s.consumer.deliver(P(0), 0, 3);
    await s.collector.until((c) => c.batches.length >= 1);
    const error = await s.source.tryCommit(P(0), 4).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'TWG_KAFKA_COMMIT_AHEAD', partition: P(0) });
    expect((error as Error).message).toMatch(/t\/0: next 4 is beyond 3/);
    expect(await s.source.tryCommit(P(0), 3)).toEqual({ kind: 'committed' });
    expect(s.consumer.commits).toEqual([[{ topic: 't', partition: 0, next: 3 }]]);
    await s.source.close();
  });

  it('refuses an invalid offset with the field named', async () => {
    const s = setup();
    await expect(s.source.commit(P(0), -1)).rejects.toThrow(
      /next: -1 is not a non-negative safe integer/,
    );
    await expect(s.source.commit(P(0), 2 ** 53)).rejects.toThrow(/next:/);
    await s.source.close();
  });
});

describe('KafkaGroupSource failures', () => {
  it('a crash without restart ends batches() with the cause and drops waiting commits', async () => {
    const s = setup();
    await started(s);
    s.consumer.join([P(0)]);
    s.consumer.emit({ kind: 'join-starting' });
    const waiting = s.source.tryCommit(P(0), 1);
    s.consumer.emit({ kind: 'crashed', error: new Error('broker gone'), restart: false });
    expect(await waiting).toMatchObject({ kind: 'dropped', reason: 'not-running' });
    await expect(s.collector.until(() => false)).rejects.toThrow(
      /TWG_KAFKA_CONSUMER_FAILED: the Kafka consumer failed and will not restart: broker gone/,
    );
    await s.source.close();
  });

  it('a crash with restart rejoins: kept partitions go back to their floor, pauses are stated again', async () => {
    const s = setup();
    await started(s);
    s.consumer.join([P(0), P(1)]);
    s.consumer.deliver(P(0), 0, 4);
    s.source.pause([P(1)]);
    s.consumer.take();
    s.consumer.emit({ kind: 'crashed', error: new Error('socket closed'), restart: true });
    const waiting = s.source.tryCommit(P(0), 4);
    await tick();
    expect(s.consumer.commits).toEqual([]);
    s.consumer.join([P(0), P(1)]);
    expect(s.consumer.take()).toEqual(['seek t/0 4', 'pause t/1']);
    expect(await waiting).toEqual({ kind: 'committed' });
    await s.source.close();
  });

  it('an offset beyond 2^53 ends the source, naming the partition and the offset', async () => {
    const s = setup();
    await started(s);
    s.consumer.join([P(0)]);
    s.consumer.batch({
      topic: 't',
      partition: 0,
      firstOffset: '9007199254740991',
      lastOffset: '9007199254740993',
      highWatermark: '9007199254740994',
      kind: 'messages',
      messages: [],
    });
    const error = await s.collector.until(() => false).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'TWG_KAFKA_OFFSET_UNSAFE', partition: P(0) });
    expect((error as Error).message).toMatch(
      /t\/0 offset 9007199254740993 is not a non-negative integer below 2\^53/,
    );
    // Fetching stops: the source is dead and its queue will never drain.
    expect(s.consumer.take()).toEqual(['pause t/0']);
    await s.source.close();
  });

  it('an assignment listener that throws ends the source', async () => {
    const s = setup();
    s.source.onAssignment(() => {
      throw new Error('tracker refused');
    });
    await started(s);
    s.consumer.join([P(0)]);
    await expect(s.collector.until(() => false)).rejects.toThrow(
      /TWG_KAFKA_LISTENER_FAILED: the assignment listener threw: tracker refused/,
    );
    await s.source.close();
  });

  it('a failed connection is reported by batches()', async () => {
    const s = setup();
    s.consumer.connect = () => Promise.reject(new Error('ECONNREFUSED'));
    await expect(s.collector.until(() => false)).rejects.toThrow(
      /TWG_KAFKA_BROKER_UNREACHABLE: could not connect to any broker of .*: ECONNREFUSED/,
    );
    await s.source.close();
  });
});

describe('KafkaGroupSource flow control and lifecycle', () => {
  it('combines pipeline pauses with the queue bound and tells the client only on transitions', async () => {
    const s = setup({ maxQueuedBatches: 2 });
    await started(s);
    s.consumer.join([P(0), P(1)]);
    s.consumer.take();
    s.source.pause([P(0)]);
    expect(s.consumer.take()).toEqual(['pause t/0']);
    s.consumer.deliver(P(0), 0, 1); // fetched before the pause took effect: held in the queue
    s.consumer.deliver(P(1), 0, 1);
    expect(s.consumer.take()).toEqual(['pause t/1']); // two queued: the bound is reached
    s.consumer.deliver(P(1), 1, 1);
    expect(s.source.stats()).toMatchObject({ queuedBatches: 3, queuePauses: 1 });
    // The prefetch as flow control reads it: partition 0's batch is held by
    // the pipeline's own pause and does not count; partition 1's two fill it.
    expect(s.source.prefetchFill()).toBe(1);

    await s.collector.until((c) => c.batches.length >= 2);
    expect(spans(s.collector)).toEqual(['1[0,1)', '1[1,2)']);
    // Drained: the queue lets go of partition 1, but partition 0 stays paused for the pipeline.
    expect(s.consumer.take()).toEqual(['resume t/1']);
    expect(s.source.prefetchFill()).toBe(0);
    expect(await s.collector.yieldable()).toEqual([]);

    s.source.resume([P(0)]);
    expect(s.consumer.take()).toEqual(['resume t/0']);
    await s.collector.until((c) => c.batches.length >= 3);
    expect(spans(s.collector)[2]).toBe('0[0,1)');
    expect(text(s.collector.batches[2]?.records[0]?.value ?? new Uint8Array())).toBe('t/0@0');
    await s.source.close();
  });

  it('lets go of the queue pause of a revoked partition, so it does not come back paused', async () => {
    const s = setup({ maxQueuedBatches: 1 });
    await started(s);
    s.consumer.join([P(0), P(1)]);
    s.consumer.deliver(P(0), 0, 1);
    expect(s.consumer.take()).toEqual(['pause t/0']);
    s.consumer.emit({ kind: 'join-starting' });
    s.consumer.emit({ kind: 'joined', assignment: [P(1)] });
    expect(s.consumer.take()).toEqual(['resume t/0']);
    expect(s.source.stats()).toMatchObject({ queuedBatches: 0, purgedBatches: 1 });
    await s.source.close();
  });

  it('close is idempotent, ends batches(), disconnects once and drops later commits', async () => {
    const s = setup();
    await started(s);
    s.consumer.join([P(0)]);
    s.consumer.deliver(P(0), 0, 1);
    const a = s.source.close();
    const b = s.source.close();
    expect(a).toBe(b);
    await a;
    await s.collector.until((c) => c.ended);
    expect(s.collector.ended).toBe(true);
    expect(s.consumer.take().filter((c) => c === 'disconnect')).toHaveLength(1);
    expect(await s.source.tryCommit(P(0), 1)).toMatchObject({ kind: 'dropped', reason: 'closed' });
  });

  it('has one reader at a time', async () => {
    const s = setup();
    await started(s);
    const second = s.source.batches(new AbortController().signal)[Symbol.asyncIterator]();
    await expect(second.next()).rejects.toThrow(
      /TWG_KAFKA_MISUSE: batches\(\) is already being iterated/,
    );
    await s.source.close();
  });

  it('an aborted signal ends batches() but keeps the membership, so the last positions can be committed', async () => {
    const s = setup();
    await started(s);
    s.consumer.join([P(0)]);
    s.collector.controller.abort();
    await s.collector.until((c) => c.ended);
    expect(s.collector.ended).toBe(true);
    expect(await s.source.tryCommit(P(0), 1)).toEqual({ kind: 'committed' });
    await s.source.close();
  });
});

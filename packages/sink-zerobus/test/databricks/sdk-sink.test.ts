import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { status } from '@grpc/grpc-js';
import { Field, Int64, Schema, Utf8 } from 'apache-arrow';
import { derivedCoverage, offsetSpan, RECORD_ID_COLUMN, sinkId } from '@thalweg/connector-core';
import { ZerobusSink } from '../../src/zerobus-sink.js';
import type { ZerobusPeer } from '../peer/zerobus-peer.js';
import { quiet, recordingTarget } from '../helpers.js';
import { idOf, ORDERS_FIELDS, ORDERS_SCHEMA, ordersBatch } from './orders-batch.js';
import { audit } from './peer-audit.js';
import { sdkFactory, startPeer } from './peer-fixture.js';

// ZerobusSink over the REAL native binding, against the in-process peer.
const TABLE = 'main.thalweg.orders';
const ID = sinkId('zerobus-sdk');
const ROWS = 10;

let peer: ZerobusPeer;
beforeEach(async () => {
  peer = await startPeer({ ackDelayMs: 3 });
  peer.expectSchema(TABLE, ORDERS_SCHEMA);
});
afterEach(async () => {
  await peer.stop();
});

function sdkSink(streams: number) {
  const target = recordingTarget<'secondary'>();
  const sink = new ZerobusSink<'secondary'>({
    id: ID,
    config: { table: TABLE, streams, retry: { baseDelayMs: 5 }, rebuild: { baseDelayMs: 5 } },
    fields: ORDERS_FIELDS,
    factory: sdkFactory(peer),
    confirm: target,
    log: quiet,
  });
  return { sink, target };
}

/** Submits `batches` batches of ROWS rows each; returns the record ids sent. */
async function send(sink: ZerobusSink<'secondary'>, batches: number, from = 0): Promise<string[]> {
  const ids: string[] = [];
  for (let i = from; i < from + batches; i++) {
    const span = offsetSpan('orders', 0, i * ROWS, (i + 1) * ROWS);
    await sink.submit(ordersBatch(span.start, span.end), span, derivedCoverage(ID, span));
    for (let o = span.start; o < span.end; o++) ids.push(idOf(o));
  }
  return ids;
}

function confirmedOnce(target: ReturnType<typeof recordingTarget<'secondary'>>, batches: number) {
  const starts = target.applied.map((a) => a.receipt.span.start).sort((a, b) => a - b);
  expect(starts).toEqual(Array.from({ length: batches }, (_, i) => i * ROWS));
}

describe('ZerobusSink over the native binding and the local peer', () => {
  it('lands every row: rows counted on the peer equal rows sent', { timeout: 20_000 }, async () => {
    const { sink, target } = sdkSink(3);
    const sent = await send(sink, 30);
    await sink.flush();
    confirmedOnce(target, 30);
    expect(peer.rowsReceived(TABLE)).toBe(30 * ROWS);
    expect(peer.rowsAcknowledged(TABLE)).toBe(30 * ROWS);
    expect(peer.values(TABLE, 'n')).toHaveLength(sent.length);
    expect(audit(peer, TABLE, sent)).toEqual({ missing: [], duplicates: 0, unexplained: [] });
    expect(peer.violations).toEqual([]);
    await sink.close();
    expect(peer.connections.every((c) => c.state !== 'open')).toBe(true);
  });

  it(
    'keeps delivering with delayed acknowledgements, over every stream of the pool',
    { timeout: 20_000 },
    async () => {
      peer.knobs.ackDelayMs = 60;
      const { sink, target } = sdkSink(4);
      const sent = await send(sink, 40);
      await sink.flush();
      confirmedOnce(target, 40);
      // Each stream's wait holds its lock; the pool spread the batches over all four.
      const used = peer.connections.filter((c) => c.messages > 0);
      expect(used).toHaveLength(4);
      expect(sink.metrics().reduce((n, m) => n + m.coalesce.sum, 0)).toBe(40);
      expect(audit(peer, TABLE, sent)).toEqual({ missing: [], duplicates: 0, unexplained: [] });
      await sink.close();
    },
  );

  it(
    'loses nothing when the server fails mid-stream with a retryable status',
    { timeout: 20_000 },
    async () => {
      peer.failAfter(7, status.UNAVAILABLE, 'injected: leader moved');
      const { sink, target } = sdkSink(2);
      const sent = await send(sink, 30);
      await sink.flush();
      confirmedOnce(target, 30);
      const result = audit(peer, TABLE, sent);
      expect(result.missing).toEqual([]);
      // Duplicates only of batches the peer received and never acknowledged, replayed by the SDK.
      expect(result.unexplained).toEqual([]);
      expect(result.duplicates).toBe(peer.rowsReceived(TABLE) - sent.length);
      expect(peer.connections.some((c) => c.failedWith === status.UNAVAILABLE)).toBe(true);
      // The SDK recovered by itself: the sink saw no failure and rebuilt nothing.
      expect(sink.metrics().reduce((n, m) => n + m.poisoned.value + m.rebuilds.value, 0)).toBe(0);
      await sink.close();
    },
  );

  it(
    'loses nothing when the server asks the client to rotate its stream',
    { timeout: 20_000 },
    async () => {
      peer.rotateAfter(5, 300);
      const { sink, target } = sdkSink(1);
      const sent = await send(sink, 5);
      await sink.flush();
      // The fifth acknowledgement asked for the rotation; the server closes
      // the stream once its grace is over. Sent only then, the rest must go
      // over a new connection (sent at once, a fast client could finish
      // inside the grace on the first one).
      for (let i = 0; i < 400 && peer.connections[0]?.state !== 'ended'; i++) {
        await new Promise((r) => setTimeout(r, 10));
      }
      sent.push(...(await send(sink, 15, 5)));
      await sink.flush();
      confirmedOnce(target, 20);
      const result = audit(peer, TABLE, sent);
      expect(result.missing).toEqual([]);
      expect(result.unexplained).toEqual([]);
      // The rotated connection ended cleanly and a new one carried the rest.
      expect(peer.connections.length).toBeGreaterThanOrEqual(2);
      expect(peer.connections[0]?.failedWith).toBeNull();
      expect(peer.connections[0]?.state).toBe('ended');
      await sink.close();
    },
  );

  it(
    'rebuilds and replays when a non-retryable status kills a stream',
    { timeout: 20_000 },
    async () => {
      peer.failAfter(5, status.INVALID_ARGUMENT, 'injected: record rejected');
      const { sink, target } = sdkSink(1);
      const sent = await send(sink, 20);
      await sink.flush();
      confirmedOnce(target, 20);
      const m = sink.metrics()[0];
      expect(m?.poisoned.value).toBe(1);
      expect(m?.rebuilds.value).toBe(1);
      const result = audit(peer, TABLE, sent);
      expect(result.missing).toEqual([]);
      // The sink replays every batch its lane had not seen confirmed (ADR 0010).
      // An acknowledgement the peer sent just before failing may never reach the
      // client, so a replay can duplicate an acknowledged batch, but only one
      // the failed connection received.
      const failed = new Set(
        peer.connections.filter((c) => c.failedWith !== null).map((c) => c.id),
      );
      const onFailed = new Set(
        peer.batches
          .filter((b) => b.table === TABLE && failed.has(b.connection))
          .flatMap((b) => (b.values ?? []).map((row) => String(row[RECORD_ID_COLUMN]))),
      );
      expect(result.unexplained.filter((id) => !onFailed.has(id))).toEqual([]);
      await sink.close();
    },
  );

  it(
    'fails loud on a schema the table refuses, classified fatal-config',
    { timeout: 20_000 },
    async () => {
      peer.expectSchema(
        TABLE,
        new Schema([
          new Field(RECORD_ID_COLUMN, new Utf8(), false),
          new Field('n', new Int64(), false),
        ]),
      );
      const { sink } = sdkSink(1);
      const span = offsetSpan('orders', 0, 0, ROWS);
      const submit = sink.submit(ordersBatch(0, ROWS), span, derivedCoverage(ID, span));
      await expect(submit).rejects.toMatchObject({ code: 'TWG_ZEROBUS_FATAL_CONFIG' });
      await expect(submit).rejects.toThrow(/main\.thalweg\.orders.*does not match the table/);
      // No stream storm: one refused setup, no rebuilds.
      expect(peer.connections).toHaveLength(1);
      expect(peer.rowsReceived(TABLE)).toBe(0);
      await sink.close().catch(() => undefined);
    },
  );
});

import { describe, expect, it } from 'vitest';
import {
  DEFAULT_MEMORY_LIMIT_BYTES,
  derivedCoverage,
  monotonicClock,
  offsetSpan,
  runDerivation,
  sinkId,
} from '@thalweg/connector-core';
import { recordingTarget } from '../helpers.js';
import { events } from './zerobus-part-example.js';

describe("the README's zerobus() example", () => {
  it('opens, derives its rows and delivers them through the context', async () => {
    const confirm = recordingTarget<'secondary'>();
    const opened = await events.open({
      id: sinkId('zb-events'),
      cluster: 'prod-eu',
      confirm,
      log: { info: () => undefined, debug: () => undefined },
      clock: monotonicClock,
      memoryLimitBytes: DEFAULT_MEMORY_LIMIT_BYTES,
    });
    const enc = new TextEncoder();
    const span = offsetSpan('events', 0, 0, 3);
    const values = ['{"type":"signup","userId":7}', 'not json', '{"userId":8}'];
    const raw = {
      span,
      records: values.map((v, offset) => ({
        offset,
        key: null,
        value: enc.encode(v),
        timestamp: 0,
        headers: [],
      })),
    };
    const { batch, quarantined } = await runDerivation(opened.derive, 'prod-eu', raw);
    expect(quarantined.map((q) => [q.offset, q.reason])).toEqual([
      [1, 'decode'],
      [2, 'contract'],
    ]);
    if (batch === null) throw new Error('the derivation left nothing');
    await opened.sink.submit(batch, span, derivedCoverage(sinkId('zb-events'), span));
    await opened.sink.flush();
    expect(confirm.applied).toHaveLength(1);
    expect(opened.stats().deliveredRecords).toBe(1);
    await opened.sink.close();
  });
});

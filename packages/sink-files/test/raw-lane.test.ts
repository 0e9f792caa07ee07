import { describe, expect, it } from 'vitest';
import { anchor, batchOf, openSink, tempDir, WRITERS } from './helpers.js';

describe.each(WRITERS)('raw segments lane metrics, %s writer', (writer) => {
  it('reports its one lane, stream 0, whose counters move as batches are submitted and made durable', async () => {
    const sink = await openSink(await tempDir(), { writer });
    const lanes = sink.lanes();
    expect(lanes.map((l) => l.stream)).toEqual(['0']);
    const metrics = lanes[0]!.metrics;
    expect(metrics.submitted.value).toBe(0);
    const batches = [0, 1, 2, 3].map((i) => batchOf('t', 0, i * 5, i * 5 + 5));
    for (const b of batches) await sink.submit(b, b.span, anchor(b));
    expect(metrics.submitted.value).toBe(4);
    await sink.flush();
    // The same live object, read again: every batch durable and settled.
    expect(sink.lanes()[0]!.metrics).toBe(metrics);
    expect(metrics.delivered.value).toBe(4);
    expect(metrics.deliveryLatencyMs.count).toBe(4);
    expect(metrics.coalesce.sum).toBe(4);
    expect(metrics.pending.value).toBe(0);
    expect(metrics.saturation.value).toBe(0);
    await sink.close();
  });
});

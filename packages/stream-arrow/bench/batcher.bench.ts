import { AdaptiveBatcher } from '@thalweg/stream-arrow';
import { emit, medianMs, round } from './measure.js';

// The batcher's own cost per record (it sits on the hot path of every
// record), against the bare cost of pushing the record into an array.
const RECORDS = 1_000_000;
let now = 0;
const clock = { now: () => now };
const batched = medianMs(() => {
  const batcher = new AdaptiveBatcher<number>(
    { maxRows: 10_000, maxBytes: 8 << 20, maxAgeMs: 50 },
    clock,
  );
  for (let i = 0; i < RECORDS; i++) {
    now += 0.001;
    batcher.add(i, 200);
  }
}, 5);
const bare = medianMs(() => {
  const items: number[] = [];
  for (let i = 0; i < RECORDS; i++) {
    now += 0.001;
    items.push(i);
    if (items.length === 10_000) items.length = 0;
  }
}, 5);
emit({
  bench: 'adaptive-batcher',
  records: RECORDS,
  ms: round(batched),
  ns_per_record: Math.round((batched * 1e6) / RECORDS),
  baseline_ms: round(bare),
});

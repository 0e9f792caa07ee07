import {
  ByteBudget,
  ExpansionEstimator,
  monotonicClock,
  parseByteBudgetConfig,
  parseExpansionEstimatorConfig,
} from '@thalweg/connector-core';
import { emit, opsPerSecond } from './measure.js';

// Uncontended admission: the pair a pipeline runs per record when there is
// room (estimate the cost, tryAcquire, and release on ack), against the
// promise-based acquire as the in-run baseline that the fast path avoids.
const config = parseByteBudgetConfig({ bytes: 64 * 1024 * 1024, warmUp: { fraction: 1 } });
const estimator = new ExpansionEstimator(parseExpansionEstimatorConfig({}));
for (let i = 0; i < 1024; i++) estimator.observe(512, 1_500 + (i % 13) * 40);

const budget = new ByteBudget(config, monotonicClock);
let sizes = 0;
const pairs = opsPerSecond(() => {
  const cost = estimator.cost(256 + (sizes++ & 255));
  if (budget.tryAcquire(cost).kind === 'granted') budget.release(cost);
});
const bare = opsPerSecond(() => {
  if (budget.tryAcquire(1_024).kind === 'granted') budget.release(1_024);
});

async function promisePairsPerSecond(ms = 1000): Promise<number> {
  const b = new ByteBudget(config, monotonicClock);
  const run = async (until: number) => {
    let n = 0;
    while (performance.now() < until) {
      for (let i = 0; i < 256; i++) {
        await b.acquire(1_024);
        b.release(1_024);
      }
      n += 256;
    }
    return n;
  };
  await run(performance.now() + 200);
  const start = performance.now();
  const n = await run(start + ms);
  return Math.round((n * 1000) / (performance.now() - start));
}
const viaPromise = await promisePairsPerSecond();

emit({
  bench: 'byte-budget',
  acquire_release_per_s: pairs,
  try_acquire_release_bare_per_s: bare,
  promise_acquire_release_per_s: viaPromise,
  speedup_over_promise: Number((pairs / viaPromise).toFixed(2)),
  target_per_s: 1_000_000,
});

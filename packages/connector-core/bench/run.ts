// `pnpm --filter @thalweg/connector-core bench`: one JSON object per line.
await import('./record-id.bench.js');
await import('./byte-budget.bench.js');
await import('./backpressure-state-machine.bench.js');
await import('./quarantine-overflow.bench.js');

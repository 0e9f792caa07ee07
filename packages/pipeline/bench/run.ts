// `pnpm --filter @thalweg/pipeline bench`: one JSON object per line.
await import('./secondary-isolation.bench.js');

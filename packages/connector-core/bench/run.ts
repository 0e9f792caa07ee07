// `pnpm --filter @thalweg/connector-core bench`: one JSON object per line.
await import('./record-id.bench.js');

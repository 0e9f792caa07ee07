// `pnpm --filter @thalweg/source-files bench`: one JSON object per line.
await import('./ndjson.bench.js');
await import('./arrow.bench.js');

// `pnpm --filter @thalweg/stream-arrow bench`: one JSON object per line.
await import('./build-encode.bench.js');

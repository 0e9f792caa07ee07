// `pnpm --filter @thalweg/pipeline bench`: one JSON object per line.
// kafka-e2e needs THALWEG_KAFKA_BROKERS (`eval "$(pnpm services:up)"`).
await import('./secondary-isolation.bench.js');
await import('./kafka-e2e.bench.js');

// The Kafka benches again over @platformatic/kafka (ADR 0046), which needs
// Node 22+: `pnpm bench` runs this file on Node 24 LTS with
// THALWEG_BENCH_KAFKA_CLIENT=platformatic, after run.ts on the machine's
// Node. Each line says its client; the baseline stays the bare kafkajs
// consumer, so the ratios of both clients compare.
await import('./kafka-e2e.bench.js');
await import('./kafka-e2e-full.bench.js');

import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

// `pnpm --filter @thalweg/pipeline bench`: one JSON object per line.
// kafka-e2e and backpressure need THALWEG_KAFKA_BROKERS (`eval "$(pnpm services:up)"`),
// dedup THALWEG_ETCD_ENDPOINTS.
await import('./secondary-isolation.bench.js');
await import('./dedup.bench.js');
await import('./kafka-e2e.bench.js');
await import('./kafka-e2e-full.bench.js');

// In a process of its own: its pipeline reads the process's RSS as the
// memory signal, and what the benches above left on the heap must not count.
const bench = fileURLToPath(new URL('./backpressure.bench.js', import.meta.url));
await new Promise<void>((resolve, reject) => {
  const child = spawn(process.execPath, [bench], { stdio: 'inherit' });
  child.on('error', reject);
  child.on('exit', (code, signal) => {
    if (code === 0) resolve();
    else
      reject(new Error(`backpressure bench ended with ${signal ?? `exit code ${String(code)}`}`));
  });
});

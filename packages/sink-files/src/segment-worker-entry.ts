import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * The file the writer thread runs: `segment-worker.js` next to this module
 * in the compiled `dist/`. Node 20 cannot run a `.ts` file as a worker, and
 * a worker thread does not go through vite, so when this module runs from
 * its TypeScript source (under vitest) the compiled worker in `../dist/` is
 * used: tests of the worker writer need `tsc -b` first (`pnpm test:all`
 * runs it before any test). The protocol number check at start-up
 * (worker-protocol.ts) refuses a worker of another build.
 */
export function segmentWorkerEntry(): URL {
  const here = import.meta.url;
  const relative = here.endsWith('.ts') ? '../dist/segment-worker.js' : './segment-worker.js';
  return new URL(relative, here);
}

export function segmentWorkerEntryExists(entry: URL): boolean {
  return existsSync(fileURLToPath(entry));
}

import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { WORKER_RESOURCE_LIMITS } from '@thalweg/connector-core';
import { RawSinkError, reasonOf } from './errors.js';
import { WORKER_PROTOCOL, type FromWorker, type WorkerInit } from './worker-protocol.js';

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

/**
 * Starts the writer thread and waits until it runs. A missing compiled
 * entry, a thread that fails to load, or one of another build is refused
 * here, at open, with TWG_RAW_WRITER_UNAVAILABLE.
 */
export async function startSegmentWorker(init: WorkerInit): Promise<Worker> {
  const entry = segmentWorkerEntry();
  if (!segmentWorkerEntryExists(entry)) {
    throw new RawSinkError(
      'TWG_RAW_WRITER_UNAVAILABLE',
      `the writer thread's entry ${entry.pathname} does not exist: build the package ` +
        "(tsc -b) or open the sink with writer: 'inline'",
    );
  }
  let worker: Worker | null = null;
  try {
    worker = new Worker(entry, {
      workerData: init,
      // No inherited flags: the writer's code needs none, and a parent's
      // can stop the thread (`--input-type` of `node -e`; flags refused in
      // a worker) or resolve its imports to other files (`--conditions`).
      execArgv: [],
      resourceLimits: WORKER_RESOURCE_LIMITS,
    });
    await ready(worker);
  } catch (cause) {
    await worker?.terminate();
    throw new RawSinkError(
      'TWG_RAW_WRITER_UNAVAILABLE',
      `the writer thread ${entry.pathname} did not start: ${reasonOf(cause)}`,
      {},
      cause,
    );
  }
  return worker;
}

/** Resolves on the thread's first message if it is a ready of this protocol; rejects otherwise. */
function ready(worker: Worker): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const onMessage = (message: FromWorker) => {
      settle();
      if (message.type === 'ready' && message.protocol === WORKER_PROTOCOL) resolve();
      else {
        reject(
          new Error(
            `it speaks ${JSON.stringify(message)}, not protocol ${WORKER_PROTOCOL} ` +
              '(a stale build: run tsc -b)',
          ),
        );
      }
    };
    const onError = (error: Error) => {
      settle();
      reject(error);
    };
    const onExit = (code: number) => {
      settle();
      reject(new Error(`it exited with code ${code} before it was ready`));
    };
    const settle = () => {
      worker.off('message', onMessage);
      worker.off('error', onError);
      worker.off('exit', onExit);
    };
    worker.on('message', onMessage);
    worker.on('error', onError);
    worker.on('exit', onExit);
  });
}

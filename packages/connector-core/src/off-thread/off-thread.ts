import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker, type Transferable } from 'node:worker_threads';
import { WORKER_RESOURCE_LIMITS } from './worker-limits.js';

/** What goes to the thread: one request, with the id its answer comes back under. */
export interface OffThreadRequest<Q> {
  readonly id: number;
  readonly request: Q;
}

/** What comes back: the answer, or why the thread could not give it. */
export type OffThreadAnswer<A> =
  { readonly id: number; readonly answer: A } | { readonly id: number; readonly error: string };

export interface OffThreadOptions {
  /** The compiled worker module (`serveOffThread` runs in it). */
  readonly entry: URL;
  /** Names the work in log lines ("dedup: the hash thread"). */
  readonly name: string;
  readonly log: (line: string) => void;
  /** Data the worker reads from `workerData` once, at its start. */
  readonly workerData?: unknown;
}

/**
 * One worker thread for work that would otherwise run on the ingest thread:
 * each request goes with its buffers transferred, not copied, and its answer
 * comes back the same way. The work must be a pure function of the request,
 * runnable on either thread, because it falls back to the calling thread
 * (`here`): for good when the compiled worker is missing (a test run from
 * sources without `tsc -b`) or the thread dies, and for one request when the
 * thread answers it with an error. So a dead thread costs speed, never a
 * result. Idle, the thread does not keep the process alive.
 */
export class OffThread<Q, A> {
  private worker: Worker | null = null;
  private failed = false;
  private next = 0;
  private readonly waiting = new Map<number, (answer: OffThreadAnswer<A>) => void>();

  constructor(private readonly options: OffThreadOptions) {}

  /** `request` answered on the thread, or `here()` on this one when the thread cannot. */
  async run(request: Q, transfer: readonly Transferable[], here: () => A): Promise<A> {
    const worker = this.started();
    if (worker === null) return here();
    const id = this.next++;
    const answer = await new Promise<OffThreadAnswer<A>>((resolve) => {
      this.waiting.set(id, resolve);
      const message: OffThreadRequest<Q> = { id, request };
      worker.postMessage(message, transfer as Transferable[]);
      // Busy while an answer is owed, so the thread does not keep an idle process alive.
      if (this.waiting.size === 1) worker.ref();
    });
    // The thread failed mid-request (its buffers went with it) or threw: this thread answers.
    return 'error' in answer ? here() : answer.answer;
  }

  /** Whether requests still go to the thread (false once it is missing or failed). */
  get onThread(): boolean {
    return !this.failed;
  }

  /**
   * Boots the thread now rather than at the first request, so its start (a
   * new isolate loading the module) overlaps what comes before.
   */
  start(): void {
    this.started();
  }

  /** Stops the thread; what it still owed, and later requests, run on the calling thread. */
  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    this.failed = true;
    for (const [id, resolve] of this.waiting) resolve({ id, error: 'closed' });
    this.waiting.clear();
    await worker?.terminate();
  }

  private started(): Worker | null {
    if (this.worker !== null || this.failed) return this.worker;
    const { entry, name, log } = this.options;
    if (!existsSync(fileURLToPath(entry))) {
      this.failed = true;
      log(`${name}: no compiled worker at ${entry.pathname}; running on the calling thread`);
      return null;
    }
    const worker = new Worker(entry, {
      execArgv: [],
      resourceLimits: WORKER_RESOURCE_LIMITS,
      ...(this.options.workerData === undefined ? {} : { workerData: this.options.workerData }),
    });
    worker.unref();
    worker.on('message', (answer: OffThreadAnswer<A>) => {
      const resolve = this.waiting.get(answer.id);
      this.waiting.delete(answer.id);
      if (this.waiting.size === 0) worker.unref();
      resolve?.(answer);
    });
    const fail = (reason: string): void => {
      this.failed = true;
      this.worker = null;
      log(`${name} stopped (${reason}); running on the calling thread`);
      for (const [id, resolve] of this.waiting) resolve({ id, error: reason });
      this.waiting.clear();
    };
    worker.on('error', (error) => {
      fail(error.message);
    });
    worker.on('exit', (code) => {
      if (this.worker === worker) fail(`exit code ${code}`);
    });
    this.worker = worker;
    return worker;
  }
}

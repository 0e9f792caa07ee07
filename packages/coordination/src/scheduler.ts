/**
 * Where periodic work runs (backups, membership keep-alive, health and
 * leader watches): injected, so a test drives it instead of waiting.
 */
export interface Scheduler {
  /** Runs `task` every `ms` until the returned cancel is called. */
  every(ms: number, task: () => unknown): () => void;
}

/** The real scheduler: unref'd intervals, which never keep the process alive. */
export const intervalScheduler: Scheduler = {
  every(ms, task) {
    const timer = setInterval(task, ms);
    timer.unref();
    return () => clearInterval(timer);
  },
};

/**
 * A scheduler a test drives: `run()` runs every registered task once, in
 * registration order, and waits for what they started.
 */
export class ManualScheduler implements Scheduler {
  private readonly tasks = new Map<number, () => unknown>();
  private next = 0;

  every(_ms: number, task: () => unknown): () => void {
    const id = this.next++;
    this.tasks.set(id, task);
    return () => this.tasks.delete(id);
  }

  /** How many tasks are registered (a closed coordination leaves none). */
  get size(): number {
    return this.tasks.size;
  }

  async run(): Promise<void> {
    for (const task of [...this.tasks.values()]) await task();
  }
}

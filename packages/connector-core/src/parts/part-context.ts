import type { ConfirmTarget, Lane } from '../confirm.js';
import type { Clock } from '../flow-control/clock.js';
import type { SinkId } from '../sink-id.js';

/**
 * The topology's one logger, handed to every part it opens. `info` is for
 * what an operator should see (a stream rebuilt, a confirmation target that
 * failed); `debug` for what explains a run after the fact (each part's
 * effective settings, logged once at open). The pipeline's `log` option is
 * `info`; `debug` is silent unless the user gives one.
 */
export interface PartLog {
  readonly info: (line: string) => void;
  readonly debug: (line: string) => void;
}

/** What every part is told when the topology opens it. */
export interface PartContext {
  readonly log: PartLog;
  readonly clock: Clock;
  /**
   * The topology's memory limit (the pipeline's `memoryLimitBytes`). A part
   * that holds a queue and was given no bound takes its default from it
   * (`memoryShare`).
   */
  readonly memoryLimitBytes: number;
}

/**
 * What a sink part is told: its id (the key it was declared under), the
 * source's cluster (hashed into every record id, ADR 0003: a sink that
 * computes ids takes it from here, never from its own configuration) and
 * where its durable confirmations go.
 */
export interface SinkContext<L extends Lane> extends PartContext {
  readonly id: SinkId;
  readonly cluster: string;
  readonly confirm: ConfirmTarget<L>;
}

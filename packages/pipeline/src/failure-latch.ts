import { PipelineError } from './errors.js';

/**
 * The first failure of a run and the abort every part of it watches. Any
 * part may report a failure (raw's acknowledgements, the flow cycle, the
 * coverage recorders, the ingest loop); the first one is what `run()`
 * rejects with, and every report aborts the run.
 */
export class FailureLatch {
  readonly abort = new AbortController();
  private first: Error | null = null;

  constructor(private readonly log: (line: string) => void) {}

  get error(): Error | null {
    return this.first;
  }

  get signal(): AbortSignal {
    return this.abort.signal;
  }

  fail(error: unknown): void {
    if (this.first === null) {
      this.first =
        error instanceof Error ? error : new PipelineError('TWG_PIPELINE_STATE', String(error));
      this.log(`stopping on failure: ${reason(error)}`);
    }
    this.abort.abort();
  }
}

export function reason(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

import {
  DEFAULT_MEMORY_LIMIT_BYTES,
  monotonicClock,
  type PartContext,
} from '@thalweg/connector-core';

/** A part's context for tests, with what the part logged at each level. */
export interface RecordingPartContext {
  readonly context: PartContext;
  readonly info: string[];
  readonly debug: string[];
}

/**
 * The context a topology hands a part, built for a test of the part alone:
 * its log lines are kept per level, so a test can check that the settings
 * went to debug and nothing an operator did not need went to info. The
 * memory limit is the pipeline's default unless a test gives one.
 */
export function recordingPartContext(
  memoryLimitBytes = DEFAULT_MEMORY_LIMIT_BYTES,
): RecordingPartContext {
  const info: string[] = [];
  const debug: string[] = [];
  return {
    context: {
      log: { info: (line) => info.push(line), debug: (line) => debug.push(line) },
      clock: monotonicClock,
      memoryLimitBytes,
    },
    info,
    debug,
  };
}

import type { ChildRole } from './child-args.js';

/** One line a child prints on stdout, once a second and once more at its end. */
export interface ProgressLine {
  readonly child: 'progress';
  readonly role: ChildRole;
  /** Milliseconds since the child started. */
  readonly t: number;
  readonly final: boolean;
  readonly state: string;
  /** Records read from the source. */
  readonly read: number;
  /** Records raw confirmed durable. */
  readonly durable: number;
  /** Sum over partitions of the positions this child committed. */
  readonly committed: number;
  /** Offsets raw holds that the secondary's coverage lacks, at the last recovery plan. */
  readonly backlog: number;
  readonly shed: number;
  readonly replayed: number;
  readonly pg: {
    readonly inserted: number;
    /** Rows the inserts found already present (ON CONFLICT DO NOTHING): replays absorbed. */
    readonly duplicates: number;
    readonly retries: number;
  };
  readonly zerobus: {
    /** Injected poison-stream failures that fired (each kills a stream; the sink rebuilds it). */
    readonly poisons: number;
    readonly rebuilds: number;
  };
}

/** A progress line, or null for anything else a child printed. */
export function parseProgressLine(text: string): ProgressLine | null {
  if (!text.startsWith('{')) return null;
  try {
    const value: unknown = JSON.parse(text);
    if (
      typeof value === 'object' &&
      value !== null &&
      'child' in value &&
      value.child === 'progress'
    ) {
      return value as ProgressLine;
    }
  } catch {
    return null;
  }
  return null;
}

import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { childArgv, type ChildArgs } from './child-args.js';
import { CRASH_AT_ENV, formatCrashAt, type CrashAt } from './crash-point.js';
import { parseProgressLine, type ProgressLine } from './progress-line.js';

export interface ChildExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

const TAIL_LINES = 40;

/**
 * One child process as the parent sees it: its latest progress line, the
 * tail of its log, whether its own crash point fired, and its exit.
 */
export class ChildRun {
  last: ProgressLine | null = null;
  /** The child reported that its tripwire fired (it then SIGKILLs itself). */
  fired = false;
  readonly exited: Promise<ChildExit>;
  private readonly tail: string[] = [];
  private done = false;

  private constructor(
    private readonly proc: ChildProcess,
    readonly label: string,
    private readonly forward: ((line: string) => void) | null,
  ) {
    this.exited = new Promise((resolve) => {
      // 'close', not 'exit': by then stdout and stderr are drained, so the last
      // progress line and the crash-at line have been read.
      proc.once('close', (code, signal) => {
        this.done = true;
        resolve({ code, signal });
      });
    });
    if (proc.stdout !== null) {
      createInterface({ input: proc.stdout }).on('line', (line) => {
        const parsed = parseProgressLine(line);
        if (parsed !== null) this.last = parsed;
        else this.keep(line);
      });
    }
    if (proc.stderr !== null) {
      createInterface({ input: proc.stderr }).on('line', (line) => {
        if (line.includes('crash-at ') && line.includes(' fired')) this.fired = true;
        this.keep(line);
      });
    }
  }

  static start(
    script: string,
    args: ChildArgs,
    crashAt: CrashAt | null,
    label: string,
    forward: ((line: string) => void) | null,
  ): ChildRun {
    const env: NodeJS.ProcessEnv = { ...process.env, [CRASH_AT_ENV]: '' };
    if (crashAt !== null) env[CRASH_AT_ENV] = formatCrashAt(crashAt);
    const proc = spawn(process.execPath, [script, ...childArgv(args)], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return new ChildRun(proc, label, forward);
  }

  get alive(): boolean {
    return !this.done;
  }

  /** SIGKILL from the parent; false when the child had already exited. */
  kill(): boolean {
    if (this.done) return false;
    return this.proc.kill('SIGKILL');
  }

  /** Asks for a graceful stop. */
  terminate(): void {
    if (!this.done) this.proc.kill('SIGTERM');
  }

  logTail(): readonly string[] {
    return this.tail;
  }

  private keep(line: string): void {
    this.forward?.(`[${this.label}] ${line}`);
    this.tail.push(line);
    if (this.tail.length > TAIL_LINES) this.tail.shift();
  }
}

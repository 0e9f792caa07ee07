import { execFile, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { CompiledBlock } from './compile-blocks.js';

export interface BlockRun {
  readonly ok: boolean;
  /** Why the run failed, naming the block's file and line, with its output. */
  readonly report: string;
}

/**
 * Runs a compiled block in a child process: with node for a `ts` or
 * `ts services` block, with vitest for a `ts test` block. The working
 * directory is a fresh temporary one, removed afterwards; the environment is
 * this process's (the integration suite's THALWEG_* endpoints reach
 * `services` blocks). A block that has not exited within `timeoutMs` is
 * killed and fails: a doc whose example hangs (an open handle, a wait that
 * never ends) is as broken as one that throws.
 */
export function runBlock(compiled: CompiledBlock, timeoutMs: number): Promise<BlockRun> {
  return startBlock(compiled, { timeoutMs }).exited;
}

/** A block running as a child process: stop it with a signal, or wait for it to exit. */
export interface StartedBlock {
  /** Sends the child a signal (SIGTERM: the way a service is told to stop). */
  signal(signal: NodeJS.Signals): void;
  /** Settles once the child exited: ok on status 0, else a report naming the block. */
  readonly exited: Promise<BlockRun>;
}

/**
 * Starts a compiled block in a child process (see runBlock), with `env`
 * added to this process's environment. Killed with SIGKILL after
 * `timeoutMs`, which fails it.
 */
export function startBlock(
  compiled: CompiledBlock,
  options: { readonly timeoutMs: number; readonly env?: Readonly<Record<string, string>> },
): StartedBlock {
  const { block, output } = compiled;
  const { timeoutMs } = options;
  const args =
    block.mode === 'test'
      ? [vitestBin(), 'run', '--root', dirname(output), '--reporter=dot', output]
      : ['--enable-source-maps', output];
  const cwd = mkdtempSync(join(tmpdir(), 'twg-doc-block-'));
  let child: ChildProcess | undefined;
  let sent: NodeJS.Signals | null = null;
  const exited = new Promise<BlockRun>((resolve) => {
    child = execFile(
      process.execPath,
      args,
      {
        cwd,
        timeout: timeoutMs,
        killSignal: 'SIGKILL',
        maxBuffer: 16 * 1024 * 1024,
        env: { ...process.env, ...options.env },
      },
      (error, stdout, stderr) => {
        rmSync(cwd, { recursive: true, force: true });
        if (error === null) {
          resolve({ ok: true, report: '' });
          return;
        }
        const status = String(error.code ?? error.signal);
        const how =
          sent !== null
            ? `exited with ${status} when told to stop (${sent})`
            : error.killed
              ? `did not finish within ${String(timeoutMs)} ms`
              : `exited with ${status}`;
        resolve({
          ok: false,
          report: `${block.file}:${String(block.line)}: the block ${how}\n${inMarkdown(compiled, stdout + stderr)}`,
        });
      },
    );
  });
  return {
    signal: (signal) => {
      sent = signal;
      child?.kill(signal);
    },
    exited,
  };
}

/** `/…/.cache/docs/x-l9.ts:12:5` (or its file: URL) -> `packages/x/README.md:21:5`. */
function inMarkdown(compiled: CompiledBlock, text: string): string {
  const { block, source } = compiled;
  return [pathToFileURL(source).href, source].reduce(
    (out, path) =>
      out.replaceAll(
        new RegExp(`${escapeRegExp(path)}:(\\d+)`, 'g'),
        (_, line: string) => `${block.file}:${String(block.line + Number(line))}`,
      ),
    text,
  );
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function vitestBin(): string {
  const require = createRequire(import.meta.url);
  return join(dirname(require.resolve('vitest/package.json')), 'vitest.mjs');
}

import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { flight, flightScript } from '@thalweg/test-services';

/** One running `ipc_producer.py` (pyarrow's writer): where it listens, and how it ended. */
export interface PyarrowProducer {
  readonly child: ChildProcess;
  /** Its first stdout line: the port, or the socket path. */
  readonly where: string;
  /** Resolves with the exit code (9 for --kill-after-batches) or the signal. */
  readonly exited: Promise<number | string>;
}

const running: ChildProcess[] = [];

/**
 * Spawns the pyarrow producer with `args` (see its docstring) and resolves
 * once it printed where it listens, so the socket is bound before the test
 * connects. A producer that ends before that fails the call with its stderr.
 */
export async function startProducer(args: readonly string[]): Promise<PyarrowProducer> {
  const child = spawn(flight().python, [flightScript('ipc_producer.py'), ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.push(child);
  const stderr: string[] = [];
  child.stderr.setEncoding('utf8').on('data', (text: string) => stderr.push(text));
  const exited = new Promise<number | string>((resolve) => {
    child.once('exit', (code, signal) => {
      resolve(code ?? signal ?? 'unknown');
    });
  });
  const where = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => {
      reject(
        new Error(`ipc_producer.py ${args.join(' ')} ended (${String(code)}):\n${stderr.join('')}`),
      );
    });
    createInterface({ input: child.stdout }).once('line', resolve);
  });
  return { child, where, exited };
}

/** Kills every producer still running and waits for each to go (call from afterEach). */
export async function stopProducers(): Promise<void> {
  await Promise.all(
    running.splice(0).map(async (child) => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const gone = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await gone;
    }),
  );
}

/** One generated row as the source renders it: what generated_rows.py derives from the id. */
export interface GeneratedRow {
  readonly id: number;
  readonly payload: string;
  readonly ts: unknown;
}

import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/*
 * A bench's topology in a child process of its own, so that its RSS is the
 * topology's: not what producing the backlog, the bare consumer or the
 * benches run before it left on the parent's heap.
 */

/** The topic a bench file runs its topology on when started as the child, or null in the parent. */
export function childTopic(): string | null {
  return process.argv[2] === '--topology' ? (process.argv[3] ?? '') : null;
}

/** Runs the bench file at `moduleUrl` again with `--topology <topic>`; its one JSON line on stdout. */
export async function inChild<T>(moduleUrl: string, topic: string): Promise<T> {
  const out: Buffer[] = [];
  const run = spawn(process.execPath, [fileURLToPath(moduleUrl), '--topology', topic], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  run.stdout.on('data', (chunk: Buffer) => out.push(chunk));
  const code = await new Promise<number | null>((resolve, reject) => {
    run.on('error', reject);
    run.on('exit', resolve);
  });
  if (code !== 0) throw new Error(`the topology run ended with exit code ${String(code)}`);
  return JSON.parse(Buffer.concat(out).toString()) as T;
}

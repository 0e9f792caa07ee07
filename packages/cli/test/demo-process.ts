import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const bin = fileURLToPath(new URL('../dist/bin.js', import.meta.url));
const children: ChildProcess[] = [];
const dirs: string[] = [];
/** Kills every demo started and removes its directory (call from afterEach). */
export async function stopDemos(): Promise<void> {
  for (const child of children.splice(0)) {
    if (child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    }
  }
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
}

/** Starts `thalweg demo --port 0` with more records than the test waits for; resolves with its URL. */
export async function startDemo(): Promise<{ readonly url: string; readonly child: ChildProcess }> {
  const dir = await mkdtemp(join(tmpdir(), 'twg-demo-telemetry-'));
  dirs.push(dir);
  const child = spawn(
    process.execPath,
    [bin, 'demo', '--port', '0', '--records', '50000000', '--payload', '32', '--dir', dir],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  children.push(child);
  const lines = createInterface({ input: child.stderr as NodeJS.ReadableStream });
  const seen: string[] = [];
  const url = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => {
      reject(new Error(`the demo ended (${String(code)}) before serving:\n${seen.join('\n')}`));
    });
    lines.on('line', (line) => {
      seen.push(line);
      const m = /telemetry at (http:\/\/\S+)\/metrics/.exec(line);
      if (m?.[1] !== undefined) resolve(m[1]);
    });
  });
  return { url, child };
}

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { sinkId } from '@thalweg/connector-core';
import { LevelDbCoverage } from '../../src/leveldb/index.js';

const A = sinkId('raw');

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

async function location(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'twg-leveldb-holder-'));
  dirs.push(dir);
  return join(dir, 'coverage');
}

describe('one writer per LevelDB local tier', () => {
  it('refuses a second open in this process, naming the holder', async () => {
    const at = await location();
    const first = await LevelDbCoverage.open({ location: at, sinks: [A] });
    const error = await LevelDbCoverage.open({ location: at, sinks: [A] }).then(
      () => null,
      (e: unknown) => e as Error,
    );
    expect(error?.message).toContain(
      `it is open in pid ${process.pid} on host ${hostname()} (this process)`,
    );
    await first.close();
    const second = await LevelDbCoverage.open({ location: at, sinks: [A] });
    await second.close();
  });

  it('refuses an open while another process holds it, and opens once that one is SIGKILLed', async () => {
    const at = await location();
    const index = fileURLToPath(new URL('../../dist/leveldb/index.js', import.meta.url));
    const script = `
      import { LevelDbCoverage } from ${JSON.stringify(index)};
      // Reachable until killed: a store the collector takes may let its lock go.
      globalThis.held = await LevelDbCoverage.open({ location: ${JSON.stringify(at)}, sinks: ['raw'] });
      process.stdout.write('ready\\n');
      setInterval(() => {}, 1000);
    `;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const exited = once(child, 'exit');
    try {
      await new Promise<void>((resolve, reject) => {
        child.stdout.on('data', (d: Buffer) => {
          if (d.toString().includes('ready')) resolve();
        });
        child.once('exit', (code) => reject(new Error(`the holder exited with ${code}`)));
      });
      const error = await LevelDbCoverage.open({ location: at, sinks: [A] }).then(
        () => null,
        (e: unknown) => e as Error,
      );
      expect(error?.message).toContain(`it is open in pid ${child.pid} on host ${hostname()}`);
    } finally {
      child.kill('SIGKILL');
      await exited;
    }
    const after = await LevelDbCoverage.open({ location: at, sinks: [A] });
    await after.close();
  });
});

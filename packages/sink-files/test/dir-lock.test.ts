import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFile, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DirLock, LOCK_FILE } from '../src/dir-lock.js';
import { RawSinkError } from '../src/index.js';
import { anchor, batchOf, openSink, readAll, tempDir } from './helpers.js';

async function refusal(p: Promise<unknown>): Promise<RawSinkError> {
  const error = await p.then(
    () => null,
    (e: unknown) => e,
  );
  if (!(error instanceof RawSinkError))
    throw new Error(`expected a RawSinkError, got ${String(error)}`);
  return error;
}

/** A child process that opens a sink on `dir`, writes a batch, says "ready" and waits to be killed. */
function holder(dir: string) {
  const index = fileURLToPath(new URL('../dist/index.js', import.meta.url));
  const script = `
    import { RawSegmentSink } from ${JSON.stringify(index)};
    const sink = await RawSegmentSink.open({
      id: 'raw', dir: ${JSON.stringify(dir)}, cluster: 'cluster-a',
      confirm: { apply: async () => {} }, log: () => {},
    });
    const records = [{ offset: 0, key: null, value: Buffer.from('v'), timestamp: 1, headers: [] }];
    const span = { topic: 't', partition: 0, start: 0, end: 1 };
    await sink.submit({ span, records }, span, { kind: 'raw-anchor', span });
    await sink.flush();
    process.stdout.write('ready\\n');
    // Reachable until killed: a sink the collector takes closes its lock file
    // (Node closes a FileHandle on collection), and the lock goes with it.
    globalThis.held = sink;
    setInterval(() => {}, 1000);
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      if (d.toString().includes('ready')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`the holder exited with ${code} before ready`)));
  });
  return { child, ready };
}

describe('one writer per raw directory', () => {
  it('refuses a second open in the same process, naming the holder, until the first closes', async () => {
    const dir = await tempDir();
    const first = await openSink(dir);
    const e = await refusal(openSink(dir, { writer: 'worker' }));
    expect(e.code).toBe('TWG_RAW_DIR_LOCKED');
    expect(e.message).toContain(`pid ${process.pid} on host ${hostname()} (this process)`);
    await first.close();
    const second = await openSink(dir);
    await second.close();
  });

  it('refuses an open while another process holds the directory, and takes it over once that one is SIGKILLed', async () => {
    const dir = await tempDir();
    const { child, ready } = holder(dir);
    const exited = once(child, 'exit');
    try {
      await ready;
      const e = await refusal(openSink(dir));
      expect(e.code).toBe('TWG_RAW_DIR_LOCKED');
      expect(e.message).toContain(`pid ${child.pid} on host ${hostname()}`);
      expect(e.message).not.toContain('this process');
    } finally {
      child.kill('SIGKILL');
      await exited;
    }
    // No cleanup: the lock file is still there, naming a process that is gone.
    expect(JSON.parse(await readFile(join(dir, LOCK_FILE), 'utf8'))).toMatchObject({
      pid: child.pid,
    });
    const sink = await openSink(dir);
    expect((await readAll(sink, 't', 0)).records.map((r) => r.offset)).toEqual([0]);
    const b = batchOf('t', 0, 1, 3);
    await sink.submit(b, b.span, anchor(b));
    await sink.close();
  });

  it('a lock file left by a process that is gone, or naming another host, is no lock: only the kernel lock counts', async () => {
    for (const left of [
      { pid: process.pid, host: hostname(), token: 'old', since: '2026-01-01T00:00:00.000Z' },
      { pid: 1, host: `not-${hostname()}`, token: 'x', since: '2026-01-01T00:00:00.000Z' },
      'not json at all: what a power loss can leave',
    ]) {
      const dir = await tempDir();
      await writeFile(join(dir, LOCK_FILE), typeof left === 'string' ? left : JSON.stringify(left));
      const sink = await openSink(dir);
      const held = JSON.parse(await readFile(join(dir, LOCK_FILE), 'utf8')) as { token: string };
      expect(held).toMatchObject({ pid: process.pid, host: hostname() });
      expect(held.token).not.toBe('old');
      await sink.close();
    }
  });

  it('eight openers at once in one process, over an empty or a left-over lock file: exactly one wins', async () => {
    for (let round = 0; round < 25; round++) {
      const dir = await tempDir();
      if (round % 2 === 1) await writeFile(join(dir, LOCK_FILE), '');
      const outcomes = await Promise.allSettled(
        Array.from({ length: 8 }, () => DirLock.acquire(dir, 'raw sink')),
      );
      const won = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []));
      expect(won).toHaveLength(1);
      for (const o of outcomes) {
        if (o.status === 'rejected') expect(o.reason).toMatchObject({ code: 'TWG_RAW_DIR_LOCKED' });
      }
      const onDisk = JSON.parse(await readFile(join(dir, LOCK_FILE), 'utf8')) as { token: string };
      expect(onDisk.token).toBe(won[0]!.holder.token);
      await won[0]!.release();
      // Released: the next opener takes it.
      await (await DirLock.acquire(dir, 'raw sink')).release();
    }
  });

  it('four processes opening at once: exactly one holds the directory, the others are refused naming it', async () => {
    const dir = await tempDir();
    const children = Array.from({ length: 4 }, () => opener(dir));
    try {
      const said = await Promise.all(children.map((c) => c.said));
      const winners = said.filter((s) => s === 'won');
      expect(winners).toHaveLength(1);
      const winner = children[said.indexOf('won')]!.child.pid;
      for (const s of said.filter((x) => x !== 'won')) {
        expect(s).toContain('TWG_RAW_DIR_LOCKED');
        expect(s).toContain(`pid ${winner} on host`);
      }
    } finally {
      for (const c of children) c.child.kill('SIGKILL');
      await Promise.all(children.map((c) => c.exited));
    }
  });
});

/**
 * A child process that opens a sink on `dir` and says "won" (then waits to
 * be killed) or the refusal's code and message on one line (then exits).
 */
function opener(dir: string) {
  const index = fileURLToPath(new URL('../dist/index.js', import.meta.url));
  const script = `
    import { RawSegmentSink } from ${JSON.stringify(index)};
    try {
      // Held reachable until killed (see holder).
      globalThis.held = await RawSegmentSink.open({
        id: 'raw', dir: ${JSON.stringify(dir)}, cluster: 'cluster-a',
        confirm: { apply: async () => {} }, log: () => {},
      });
      process.stdout.write('won\\n');
      setInterval(() => {}, 1000);
    } catch (e) {
      process.stdout.write(String(e.message).replace(/\\n/g, ' ') + '\\n');
      process.exit(0);
    }
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = once(child, 'exit');
  const said = new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('\n')) resolve(out.trim());
    });
    child.once('exit', (code) => reject(new Error(`an opener exited with ${code} saying nothing`)));
  });
  return { child, said, exited };
}

import { describe, expect, it } from 'vitest';
import { InMemoryDqAudit, type Derived, type DqAuditEntry } from '../../src/index.js';
import { DqAuditRecorder } from '../../src/dq/dq-audit-recorder.js';
import { until } from '../doubles/waits.js';

const span = (start: number, end: number) => ({ topic: 't', partition: 0, start, end });

/** The in-memory store, refusing the next `failures` writes and able to hold one open. */
class FlakyAudit extends InMemoryDqAudit {
  failures = 0;
  writes = 0;
  gate: Promise<void> | null = null;

  override async record(entries: readonly DqAuditEntry[]): Promise<void> {
    this.writes += 1;
    if (this.gate !== null) await this.gate;
    if (this.failures > 0) {
      this.failures -= 1;
      throw new Error('disk full (injected)');
    }
    await super.record(entries);
  }
}

describe('the dq-audit recorder', () => {
  it('writes a handed-over outcome in the background, with no flush asked for', async () => {
    const store = new FlakyAudit();
    const recorder = new DqAuditRecorder(store, () => undefined);
    recorder.add('s', span(0, 10), { c: { passed: 9, failed: 1 } });
    await until(async () => (await store.read()).length === 1);
    expect(await store.totals('s')).toEqual({ c: { passed: 9, failed: 1 } });
    expect(recorder.stats()).toMatchObject({ recorded: 1, buffered: 0, failures: 0 });
  });

  it('never makes the caller wait: outcomes handed over during a write go in the next one', async () => {
    const store = new FlakyAudit();
    let open: () => void = () => undefined;
    store.gate = new Promise<void>((r) => (open = r));
    const recorder = new DqAuditRecorder(store, () => undefined);
    recorder.add('s', span(0, 10), { c: { passed: 10, failed: 0 } });
    recorder.add('s', span(10, 20), { c: { passed: 10, failed: 0 } });
    recorder.add('s', span(20, 30), { c: { passed: 10, failed: 0 } });
    expect(recorder.stats().buffered).toBe(2);
    store.gate = null;
    open();
    await until(() => recorder.stats().recorded === 3);
    expect(store.writes).toBe(2);
    expect(await store.totals('s')).toEqual({ c: { passed: 30, failed: 0 } });
  });

  it('keeps what a failed write held, retries it on the next flush only, and logs it', async () => {
    const store = new FlakyAudit();
    store.failures = 1;
    const log: string[] = [];
    const recorder = new DqAuditRecorder(store, (l) => log.push(l));
    recorder.add('s', span(0, 10), { c: { passed: 9, failed: 1 } });
    await until(() => recorder.stats().failures === 1);
    // A failing store is not retried at every batch, only at the flow cycle's flush.
    recorder.add('s', span(10, 20), { c: { passed: 10, failed: 0 } });
    expect(store.writes).toBe(1);
    expect(recorder.stats().buffered).toBe(2);
    expect(log.join('\n')).toMatch(
      /dq-audit write of 1 entries failed, retrying next cycle: disk full/,
    );
    await recorder.flush();
    expect(await store.totals('s')).toEqual({ c: { passed: 19, failed: 1 } });
    expect(recorder.stats()).toMatchObject({ recorded: 2, buffered: 0, failures: 1 });
  });

  it('counts per sink and check what it saw, and drains then closes the store', async () => {
    const store = new FlakyAudit();
    const recorder = new DqAuditRecorder(store, () => undefined);
    const derive = recorder.audited(
      () => ({ batch: null, quarantined: [], dq: { c: { passed: 3, failed: 1 } } }),
      () => 'sink-a',
    );
    await derive({ span: span(0, 4), records: [] });
    await derive({ span: span(0, 4), records: [] });
    expect(recorder.stats().bySink).toEqual({ 'sink-a': { c: { passed: 6, failed: 2 } } });
    await recorder.close();
    await expect(store.read()).rejects.toThrow(/closed/);
    expect(recorder.stats()).toMatchObject({ recorded: 2, buffered: 0 });
  });

  it('reports a derivation that answers later once it answers, and not before', async () => {
    const recorder = new DqAuditRecorder(new FlakyAudit(), () => undefined);
    let answer: (value: Derived<null>) => void = () => undefined;
    const derive = recorder.audited(
      () => new Promise<Derived<null>>((resolve) => (answer = resolve)),
      () => 'sink-b',
    );
    const derived = derive({ span: span(0, 2), records: [] });
    expect(recorder.stats().bySink).toEqual({});
    answer({ batch: null, quarantined: [], dq: { c: { passed: 1, failed: 1 } } });
    expect((await derived).dq).toEqual({ c: { passed: 1, failed: 1 } });
    expect(recorder.stats().bySink).toEqual({ 'sink-b': { c: { passed: 1, failed: 1 } } });
    await recorder.close();
  });

  it('reports a failed drain at shutdown instead of hiding it', async () => {
    const store = new FlakyAudit();
    store.failures = 5;
    const log: string[] = [];
    const recorder = new DqAuditRecorder(store, (l) => log.push(l));
    recorder.add('s', span(0, 1), { c: { passed: 1, failed: 0 } });
    expect(await recorder.drain()).toBe(false);
    await recorder.close();
    expect(log.at(-1)).toMatch(/1 entries could not be recorded at shutdown/);
  });
});

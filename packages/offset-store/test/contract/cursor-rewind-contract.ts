import { expect, it } from 'vitest';
import type { SourceCursor } from '@thalweg/connector-core';
import { CoverageError } from '../../src/errors.js';
import type { ContractBackend } from './coverage-contract.js';
import { A } from './coverage-contract.js';

const at = { source: 'kafka-assigned', topic: 'events', partition: 3 };
const log = (nextOffset: number): SourceCursor => ({ kind: 'log-offset', nextOffset });

/**
 * `rewindCursor`, the one path by which a stored cursor moves back, as every
 * backend must show it. Called inside `describeCoverageContract`'s describe.
 */
export function cursorRewindContract(name: string, backend: ContractBackend): void {
  it('rewinds a cursor to a lower position, and saveCursor still never moves it back', async () => {
    const { store } = await backend.fresh([A]);
    await store.saveCursor(at, log(900));
    await store.rewindCursor(at, log(400));
    expect(await store.loadCursor(at)).toEqual(log(400));
    // After the rewind, the ordinary rule again: a lower save is ignored, a later one wins.
    await store.saveCursor(at, log(350));
    expect(await store.loadCursor(at)).toEqual(log(400));
    await store.saveCursor(at, log(450));
    expect(await store.loadCursor(at)).toEqual(log(450));
    // A rewind to the stored position is allowed, so a rewind can be repeated.
    await store.rewindCursor(at, log(450));
    await store.rewindCursor(at, log(0));
    expect(await store.loadCursor(at)).toEqual(log(0));
    // Only the named key moved.
    await store.saveCursor({ ...at, partition: 4 }, log(900));
    await store.rewindCursor(at, log(0));
    expect(await store.loadCursor({ ...at, partition: 4 })).toEqual(log(900));
    await store.close();
  });

  it('refuses a rewind that would move the cursor forward, naming the key, and changes nothing', async () => {
    const { store } = await backend.fresh([A]);
    await store.saveCursor(at, log(400));
    const refused = store.rewindCursor(at, log(401));
    await expect(refused).rejects.toBeInstanceOf(CoverageError);
    await expect(refused).rejects.toMatchObject({ code: 'TWG_COVERAGE_REWIND_REFUSED' });
    await expect(refused).rejects.toThrow(
      /cursor kafka-assigned events\/3: a rewind to 401 would move the cursor forward from 400/,
    );
    expect(await store.loadCursor(at)).toEqual(log(400));
    await store.close();
  });

  it('refuses a rewind of a key with no cursor, or to another kind of cursor', async () => {
    const { store } = await backend.fresh([A]);
    const none = store.rewindCursor(at, log(0));
    await expect(none).rejects.toMatchObject({ code: 'TWG_COVERAGE_REWIND_REFUSED' });
    await expect(none).rejects.toThrow(/no cursor is stored/);
    expect(await store.loadCursor(at)).toBeNull();
    const files: SourceCursor = {
      kind: 'file-set',
      files: ['a.ndjson'],
      file: 'a.ndjson',
      position: 700,
      nextOffset: 70,
    };
    await store.saveCursor(at, files);
    await expect(store.rewindCursor(at, log(10))).rejects.toThrow(
      /the stored cursor is a file-set cursor, the rewind offers a log-offset one/,
    );
    const earlier = { ...files, position: 100, nextOffset: 10 };
    await store.rewindCursor(at, earlier);
    expect(await store.loadCursor(at)).toEqual(earlier);
    await expect(store.rewindCursor(at, log(-1))).rejects.toThrow(/nextOffset: -1/);
    await expect(store.rewindCursor({ ...at, partition: -1 }, log(0))).rejects.toMatchObject({
      code: 'TWG_COVERAGE_RANGE_INVALID',
    });
    await store.close();
    await expect(store.rewindCursor(at, log(0))).rejects.toMatchObject({
      code: 'TWG_COVERAGE_CLOSED',
    });
  });

  if (!backend.persistent) return;

  it(`holds a rewind across a reopen (${name})`, async () => {
    const fixture = await backend.fresh([A]);
    if (fixture.reopen === undefined) throw new Error(`${name} cannot reopen`);
    await fixture.store.saveCursor(at, log(900));
    await fixture.store.rewindCursor(at, log(400));
    await fixture.store.checkpoint();
    const again = await fixture.reopen();
    expect(await again.loadCursor(at)).toEqual(log(400));
    await again.saveCursor(at, log(300));
    expect(await again.loadCursor(at)).toEqual(log(400));
    await again.close();
  });
}

import { describe, expect, it } from 'vitest';
import { ManifestCache, type DataFile } from '../src/index.js';

const file = (path: string): DataFile => ({
  path,
  recordCount: 1,
  fileSizeInBytes: 1,
  sequenceNumber: 0n,
  lowerBounds: new Map(),
  upperBounds: new Map(),
});

describe('ManifestCache', () => {
  it('loads a location once, and again once the least recently used entry is evicted', async () => {
    const cache = new ManifestCache(2);
    const loads: string[] = [];
    const get = (path: string): Promise<DataFile[]> =>
      cache.manifest(path, 0n, () => {
        loads.push(path);
        return Promise.resolve([file(path)]);
      });
    await get('a');
    await get('b');
    await get('a'); // a is now the most recently used
    await get('c'); // evicts b
    await get('a');
    await get('b');
    expect(loads).toEqual(['a', 'b', 'c', 'b']);
  });

  it('keeps no failed load: the next call tries again', async () => {
    const cache = new ManifestCache();
    let calls = 0;
    const load = (): Promise<DataFile[]> =>
      ++calls === 1 ? Promise.reject(new Error('S3 said 503')) : Promise.resolve([file('m')]);
    await expect(cache.manifest('m', 0n, load)).rejects.toThrow('S3 said 503');
    expect(await cache.manifest('m', 0n, load)).toEqual([file('m')]);
    expect(calls).toBe(2);
  });

  it('a manifest list and a manifest at one location are different entries', async () => {
    const cache = new ManifestCache();
    await cache.manifestList('x', () =>
      Promise.resolve([{ path: 'm', content: 0, partitionSpecId: 0, sequenceNumber: 1n }]),
    );
    expect(await cache.manifest('x', 1n, () => Promise.resolve([]))).toEqual([]);
  });
});

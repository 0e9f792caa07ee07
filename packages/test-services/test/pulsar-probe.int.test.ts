import { afterAll, describe, expect, it } from 'vitest';
import { pulsar, uniqueName } from '../src/index.js';

// Only Node's own fetch against the admin REST API: proves the broker that
// scripts/services/pulsar.sh started is up and serving metadata, before any
// Pulsar client of ours is involved.
describe('Pulsar service', () => {
  const admin = `${pulsar().adminUrl}/admin/v2`;
  const topic = uniqueName('twg-probe');
  const topicPath = `${admin}/persistent/public/default/${topic}`;

  async function call(method: string, url: string, body?: unknown): Promise<Response> {
    return fetch(url, {
      method,
      headers: { 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  }

  async function partitionNames(): Promise<string[]> {
    const res = await call('GET', `${admin}/persistent/public/default`);
    expect(res.status).toBe(200);
    const all = (await res.json()) as string[];
    return all
      .filter((t) => t.startsWith(`persistent://public/default/${topic}-partition-`))
      .sort();
  }

  afterAll(async () => {
    await call('DELETE', `${topicPath}/partitions?force=true`).catch(() => undefined);
  });

  it('has the cluster and the public/default namespace the standalone creates', async () => {
    const clusters = await call('GET', `${admin}/clusters`);
    expect(await clusters.json()).toContain('standalone');
    const namespaces = await call('GET', `${admin}/namespaces/public`);
    expect(await namespaces.json()).toContain('public/default');
  });

  it('creates a partitioned topic, lists its partitions, and adds partitions to it', async () => {
    expect((await call('PUT', `${topicPath}/partitions`, 3)).status).toBe(204);
    const metadata = await call('GET', `${topicPath}/partitions`);
    expect(await metadata.json()).toMatchObject({ partitions: 3 });
    expect(await partitionNames()).toEqual(
      [0, 1, 2].map((n) => `persistent://public/default/${topic}-partition-${n}`),
    );

    // The same name twice is a conflict, not a silent success.
    const again = await call('PUT', `${topicPath}/partitions`, 3);
    expect(again.status).toBe(409);

    expect((await call('POST', `${topicPath}/partitions`, 5)).status).toBe(204);
    expect(await (await call('GET', `${topicPath}/partitions`)).json()).toMatchObject({
      partitions: 5,
    });
    expect(await partitionNames()).toHaveLength(5);
  });
});

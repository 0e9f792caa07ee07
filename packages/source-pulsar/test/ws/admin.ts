import { pulsar, uniqueName, waitFor } from '@thalweg/test-services';

/** A new topic name in public/default, `persistent://public/default/<prefix>-…`. */
export function newTopic(prefix: string): string {
  return `persistent://public/default/${uniqueName(prefix)}`;
}

function adminPath(topic: string): string {
  return `${pulsar().adminUrl}/admin/v2/${topic.replace('persistent://', 'persistent/')}`;
}

async function call(method: string, url: string, body?: unknown): Promise<Response> {
  const res = await fetch(url, {
    method,
    headers: { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (res.status >= 300)
    throw new Error(`${method} ${url}: HTTP ${String(res.status)} ${await res.text()}`);
  return res;
}

export async function createTopic(topic: string, partitions = 0): Promise<void> {
  if (partitions === 0) await call('PUT', adminPath(topic));
  else await call('PUT', `${adminPath(topic)}/partitions`, partitions);
}

/** The subscription's backlog, from the topic's stats. */
export async function backlog(topic: string, subscription: string): Promise<number> {
  const stats = (await (await call('GET', `${adminPath(topic)}/stats`)).json()) as {
    subscriptions: Record<string, { msgBacklog: number } | undefined>;
  };
  const sub = stats.subscriptions[subscription];
  if (sub === undefined) throw new Error(`no subscription ${subscription} on ${topic}`);
  return sub.msgBacklog;
}

/** Messages the broker dispatched on the subscription (to the WebSocket API's own consumer). */
export async function dispatched(topic: string, subscription: string): Promise<number> {
  const stats = (await (await call('GET', `${adminPath(topic)}/stats`)).json()) as {
    subscriptions: Record<string, { msgOutCounter: number } | undefined>;
  };
  return stats.subscriptions[subscription]?.msgOutCounter ?? 0;
}

/**
 * Waits until `condition` holds on the broker (its admin stats) or on what a
 * session delivered, asking every 20 ms; fails naming `what` after 20 s, within
 * the test's own timeout. The shared `waitFor`, at the cadence these tests use.
 */
export function until(
  condition: () => boolean | Promise<boolean>,
  what: string | (() => string),
): Promise<void> {
  return waitFor(condition, what, { timeoutMs: 20_000, everyMs: 20 });
}

/** Adds partitions to a partitioned topic (the admin API's update): `partitions` is the new count. */
export async function growTopic(topic: string, partitions: number): Promise<void> {
  await call('POST', `${adminPath(topic)}/partitions`, partitions);
}

import { pulsar, uniqueName } from '@thalweg/test-services';

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

/** Waits until `condition` holds (polling, no fixed sleep before an expectation). */
export async function until(
  condition: () => boolean | Promise<boolean>,
  what: string,
): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

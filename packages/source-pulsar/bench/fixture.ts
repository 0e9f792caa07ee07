import { benchLine, round, uniqueName } from '@thalweg/test-services';
import WebSocket from 'ws';

/** `persistent://tenant/ns/name` to the `persistent/tenant/ns/name` tail of the REST and WebSocket paths. */
export function topicPath(topic: string): string {
  return topic.replace(/^persistent:\/\//, 'persistent/');
}

/** Creates `topic` with `partitions` partitions through the admin REST API. */
export async function createPartitionedTopic(
  adminUrl: string,
  topic: string,
  partitions: number,
): Promise<void> {
  const url = `${adminUrl}/admin/v2/${topicPath(topic)}/partitions`;
  const res = await fetch(url, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(partitions),
  });
  if (res.status >= 300)
    throw new Error(`PUT ${url}: HTTP ${String(res.status)} ${await res.text()}`);
}

/** Deletes `topic` and its partitions, subscriptions and all (best effort: the bench is done with it). */
export async function deletePartitionedTopic(adminUrl: string, topic: string): Promise<void> {
  await fetch(`${adminUrl}/admin/v2/${topicPath(topic)}/partitions?force=true`, {
    method: 'DELETE',
  }).catch(() => undefined);
}

/** How many sends the producer keeps unanswered at most. */
const WINDOW = 4_000;
/** Messages per batch entry: at most 1,024, the message-id layout's batch-index room (ADR 0032). */
const BATCH_MESSAGES = 1_000;

/**
 * Produces `records` payloads of `size` bytes to one partition's topic
 * through Pulsar's WebSocket producer with batching on, up to WINDOW sends
 * unanswered. Resolves once the broker answered every send with `ok`;
 * anything else fails, naming the send.
 */
async function producePartition(
  wsUrl: string,
  topic: string,
  records: number,
  size: number,
): Promise<void> {
  const query = new URLSearchParams({
    batchingEnabled: 'true',
    batchingMaxMessages: String(BATCH_MESSAGES),
    batchingMaxPublishDelay: '5',
    maxPendingMessages: String(WINDOW),
  });
  const socket = new WebSocket(`${wsUrl}/ws/v2/producer/${topicPath(topic)}?${query.toString()}`, {
    perMessageDeflate: false,
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('open', resolve);
    socket.once('error', reject);
    socket.once('unexpected-response', (_, res) => {
      reject(new Error(`producer on ${topic} refused: HTTP ${String(res.statusCode)}`));
    });
  });
  const payload = Buffer.alloc(size, 0x61).toString('base64');
  let sent = 0;
  let answered = 0;
  try {
    await new Promise<void>((resolve, reject) => {
      const fill = (): void => {
        while (sent < records && sent - answered < WINDOW) {
          socket.send(`{"payload":"${payload}","context":"${String(sent)}"}`);
          sent += 1;
        }
      };
      socket.on('message', (data: Buffer) => {
        const answer = JSON.parse(data.toString('utf8')) as { result?: string; context?: string };
        if (answer.result !== 'ok') {
          reject(
            new Error(
              `send ${String(answer.context)} to ${topic} failed: ${data.toString('utf8')}`,
            ),
          );
          return;
        }
        answered += 1;
        if (answered === records) resolve();
        else fill();
      });
      socket.on('error', reject);
      socket.once('close', (code) => {
        reject(
          new Error(
            `producer on ${topic} closed (${String(code)}) with ${String(records - answered)} unanswered`,
          ),
        );
      });
      fill();
    });
  } finally {
    socket.removeAllListeners('close');
    socket.close();
  }
}

/**
 * Fills a fresh partitioned topic with `records` payloads of `size` bytes,
 * spread evenly over its partitions, one batching producer per partition,
 * all at once. Returns how long it took.
 */
export async function produceBacklog(
  endpoint: { readonly wsUrl: string; readonly adminUrl: string },
  topic: string,
  partitions: number,
  records: number,
  size: number,
): Promise<{ ms: number; recordsPerSec: number }> {
  await createPartitionedTopic(endpoint.adminUrl, topic, partitions);
  const started = performance.now();
  await Promise.all(
    Array.from({ length: partitions }, (_, p) =>
      producePartition(
        endpoint.wsUrl,
        `${topic}-partition-${String(p)}`,
        Math.floor(records / partitions) + (p < records % partitions ? 1 : 0),
        size,
      ),
    ),
  );
  const ms = performance.now() - started;
  return { ms, recordsPerSec: records / (ms / 1000) };
}

/** A backlog the benches read: its topic and how it was produced. */
export interface Backlog {
  readonly topic: string;
  readonly partitions: number;
  readonly records: number;
}

/**
 * Produces `records` payloads of `valueBytes` to a fresh topic of
 * `partitions` partitions (printing the `pulsar-produce` line), runs
 * `read` on it, and deletes the topic afterwards, whatever happened.
 */
export async function withBacklog(
  endpoint: { readonly wsUrl: string; readonly adminUrl: string },
  prefix: string,
  shape: { readonly partitions: number; readonly records: number; readonly valueBytes: number },
  read: (backlog: Backlog) => Promise<void>,
): Promise<void> {
  const topic = `persistent://public/default/${uniqueName(prefix)}`;
  const { partitions, records, valueBytes } = shape;
  try {
    const produced = await produceBacklog(endpoint, topic, partitions, records, valueBytes);
    benchLine({
      bench: 'pulsar-produce',
      records,
      value_bytes: valueBytes,
      partitions,
      ms: round(produced.ms),
      records_per_s: round(produced.recordsPerSec),
    });
    await read({ topic, partitions, records });
  } finally {
    await deletePartitionedTopic(endpoint.adminUrl, topic);
  }
}

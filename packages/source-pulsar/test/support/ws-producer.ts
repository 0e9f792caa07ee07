import WebSocket from 'ws';

/** One message for the WebSocket producer; absent fields are not sent. */
export interface ProducedMessage {
  readonly payload: Uint8Array;
  readonly key?: string;
  /** Sent as a JSON object: the broker keeps them as a map. */
  readonly properties?: Readonly<Record<string, string>>;
  /** Milliseconds since the epoch. */
  readonly eventTime?: number;
}

export interface ProduceOptions {
  /** Let the producer put several messages in one entry (`batchingEnabled=true`). */
  readonly batchingMaxMessages?: number;
}

/**
 * Produces `messages` to `topic` (`persistent://…`) through Pulsar's own
 * WebSocket producer endpoint (`/ws/v2/producer/...`), all sent at once so
 * a batching producer can group them, and returns each message's id, in
 * order, once the broker answered every send with `{"result":"ok"}`.
 * Anything else fails, naming the message.
 */
export async function produce(
  wsUrl: string,
  topic: string,
  messages: readonly ProducedMessage[],
  options: ProduceOptions = {},
): Promise<string[]> {
  const path = topic.replace(/^persistent:\/\//, 'persistent/');
  const query = new URLSearchParams(
    options.batchingMaxMessages === undefined
      ? { batchingEnabled: 'false' }
      : {
          batchingEnabled: 'true',
          batchingMaxMessages: String(options.batchingMaxMessages),
          batchingMaxPublishDelay: '50',
        },
  );
  const socket = new WebSocket(`${wsUrl}/ws/v2/producer/${path}?${query.toString()}`);
  try {
    await new Promise<void>((resolve, reject) => {
      socket.once('open', resolve);
      socket.once('error', reject);
      socket.once('unexpected-response', (_, res) => {
        reject(new Error(`producer on ${topic} refused: HTTP ${String(res.statusCode)}`));
      });
    });
    const ids = new Array<string | undefined>(messages.length);
    let left = messages.length;
    const done = new Promise<void>((resolve, reject) => {
      if (left === 0) resolve();
      socket.on('message', (data: Buffer) => {
        const answer = JSON.parse(data.toString('utf8')) as {
          result?: string;
          messageId?: string;
          context?: string;
          errorMsg?: string;
        };
        const index = Number(answer.context);
        if (answer.result !== 'ok' || answer.messageId === undefined) {
          reject(
            new Error(
              `send ${String(answer.context)} to ${topic} failed: ${data.toString('utf8')}`,
            ),
          );
          return;
        }
        ids[index] = answer.messageId;
        if (--left === 0) resolve();
      });
      socket.on('error', reject);
      socket.once('close', (code) => {
        reject(
          new Error(
            `producer on ${topic} closed (${String(code)}) with ${String(left)} unanswered`,
          ),
        );
      });
    });
    messages.forEach((m, index) => {
      socket.send(
        JSON.stringify({
          payload: Buffer.from(m.payload).toString('base64'),
          context: String(index),
          ...(m.key === undefined ? {} : { key: m.key }),
          ...(m.properties === undefined ? {} : { properties: m.properties }),
          ...(m.eventTime === undefined ? {} : { eventTime: new Date(m.eventTime).toISOString() }),
        }),
      );
    });
    await done;
    return ids.map((id) => id ?? '');
  } finally {
    socket.removeAllListeners('close');
    socket.close();
  }
}

/** `n` messages whose payloads are `${prefix}-0`, `${prefix}-1`, …. */
export function numbered(prefix: string, n: number): ProducedMessage[] {
  return Array.from({ length: n }, (_, i) => ({
    payload: new TextEncoder().encode(`${prefix}-${String(i)}`),
  }));
}

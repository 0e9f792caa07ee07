import WebSocket from 'ws';
import { topicPath } from './fixture.js';

export interface ConsumeMeasure {
  readonly records: number;
  readonly bytes: number;
  /** From opening the sessions to the last record. */
  readonly totalMs: number;
  /** From the first record to the last: the steady read rate. */
  readonly steadyMs: number;
  readonly recordsPerSec: number;
}

export interface BareConsumerOptions {
  readonly wsUrl: string;
  readonly topic: string;
  readonly partitions: number;
  /** Stops once this many records were read. */
  readonly records: number;
  /** A fresh subscription each call, so every run reads the topic from the beginning. */
  readonly subscription: string;
}

/** The WebSocket API's cap on a consumer's receiver queue, the share the source grants each session too. */
const RECEIVER_QUEUE = 1000;

/**
 * The baseline the Pulsar source is measured against: the same WebSocket
 * API over `ws`, consumed by a minimal loop. One Exclusive consumer per
 * partition in pull mode, granted the receiver queue up front and topped
 * up once half of it was used; each message's frame is JSON-parsed, its
 * payload decoded from base64 and counted, and it is acknowledged
 * individually at once, the acks of one read corked into one write (as
 * the source sends a commit's). No compression, as the source: deflate
 * cost more CPU than the broker's sending on loopback. Nothing is queued,
 * converted or yielded, so the
 * difference to the source is the source's own cost. Written to be
 * copied by the end-to-end bench.
 */
export async function measureBareConsumer(options: BareConsumerOptions): Promise<ConsumeMeasure> {
  const query = new URLSearchParams({
    subscriptionType: 'Exclusive',
    subscriptionInitialPosition: 'Earliest',
    pullMode: 'true',
    receiverQueueSize: String(RECEIVER_QUEUE),
  }).toString();
  let records = 0;
  let bytes = 0;
  let firstAt = 0;
  const started = performance.now();
  const sockets: WebSocket[] = [];
  const endedAt = await new Promise<number>((resolve, reject) => {
    for (let p = 0; p < options.partitions; p++) {
      const topic = `${options.topic}-partition-${String(p)}`;
      const socket = new WebSocket(
        `${options.wsUrl}/ws/v2/consumer/${topicPath(topic)}/${options.subscription}?${query}`,
        { perMessageDeflate: false },
      );
      sockets.push(socket);
      let used = 0;
      let corked = false;
      socket.once('open', () => {
        socket.send(JSON.stringify({ type: 'permit', permitMessages: RECEIVER_QUEUE }));
      });
      socket.on('message', (data: Buffer) => {
        if (firstAt === 0) firstAt = performance.now();
        // ws keeps its connection in `_socket` (read the same way as src/ws-session.ts).
        const wire = (socket as unknown as { _socket: { cork(): void; uncork(): void } })._socket;
        if (!corked) {
          // The acks of the frames one read delivered leave in one write, as the source's do.
          corked = true;
          wire.cork();
          process.nextTick(() => {
            corked = false;
            wire.uncork();
          });
        }
        const frame = JSON.parse(data.toString('utf8')) as { messageId: string; payload: string };
        bytes += Buffer.from(frame.payload, 'base64').byteLength;
        socket.send(`{"messageId":"${frame.messageId}"}`);
        records += 1;
        if (++used >= RECEIVER_QUEUE / 2) {
          socket.send(JSON.stringify({ type: 'permit', permitMessages: used }));
          used = 0;
        }
        if (records >= options.records) resolve(performance.now());
      });
      socket.once('error', reject);
      socket.once('unexpected-response', (_, res) => {
        reject(new Error(`consumer on ${topic} refused: HTTP ${String(res.statusCode)}`));
      });
    }
  });
  await Promise.all(
    sockets.map(
      (s) =>
        new Promise<void>((resolve) => {
          if (s.readyState === WebSocket.CLOSED) resolve();
          s.once('close', () => {
            resolve();
          });
          s.close(1000);
        }),
    ),
  );
  const steadyMs = endedAt - firstAt;
  return {
    records,
    bytes,
    totalMs: endedAt - started,
    steadyMs,
    recordsPerSec: records / (steadyMs / 1000),
  };
}

import { ReadMeter, uniqueName, type ConsumeMeasure } from '@thalweg/test-services';
import WebSocket from 'ws';
import { topicPath, type Backlog } from './fixture.js';

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
export async function measureBareConsumer(
  wsUrl: string,
  backlog: Backlog,
): Promise<ConsumeMeasure> {
  // A fresh subscription each call, so every run reads the topic from the beginning.
  const subscription = uniqueName('twg-bench-bare');
  const query = new URLSearchParams({
    subscriptionType: 'Exclusive',
    subscriptionInitialPosition: 'Earliest',
    pullMode: 'true',
    receiverQueueSize: String(RECEIVER_QUEUE),
  }).toString();
  const meter = new ReadMeter();
  const sockets: WebSocket[] = [];
  const endedAt = await new Promise<number>((resolve, reject) => {
    for (let p = 0; p < backlog.partitions; p++) {
      const topic = `${backlog.topic}-partition-${String(p)}`;
      const socket = new WebSocket(
        `${wsUrl}/ws/v2/consumer/${topicPath(topic)}/${subscription}?${query}`,
        { perMessageDeflate: false },
      );
      sockets.push(socket);
      let used = 0;
      let corked = false;
      socket.once('open', () => {
        socket.send(JSON.stringify({ type: 'permit', permitMessages: RECEIVER_QUEUE }));
      });
      socket.on('message', (data: Buffer) => {
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
        meter.took(1, Buffer.from(frame.payload, 'base64').byteLength);
        socket.send(`{"messageId":"${frame.messageId}"}`);
        if (++used >= RECEIVER_QUEUE / 2) {
          socket.send(JSON.stringify({ type: 'permit', permitMessages: used }));
          used = 0;
        }
        if (meter.records >= backlog.records) resolve(performance.now());
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
  return meter.measure(endedAt);
}

import WebSocket from 'ws';

/** What the broker holds for one message: its id and publish time (milliseconds). */
export interface HeldMessageFacts {
  readonly messageId: string;
  readonly publishTime: number;
}

/**
 * Reads the first `count` messages of one topic (a partition's own topic)
 * through Pulsar's WebSocket reader endpoint, with no code of the source
 * under test, and returns each one's id and publish time in log order: what
 * a contract over the real broker expects the source to report.
 */
export async function readBack(
  wsUrl: string,
  topic: string,
  count: number,
): Promise<HeldMessageFacts[]> {
  const path = topic.replace(/^persistent:\/\//, 'persistent/');
  const socket = new WebSocket(`${wsUrl}/ws/v2/reader/${path}?messageId=earliest`);
  try {
    return await new Promise<HeldMessageFacts[]>((resolve, reject) => {
      const held: HeldMessageFacts[] = [];
      if (count === 0) resolve(held);
      socket.on('message', (data: Buffer) => {
        const m = JSON.parse(data.toString('utf8')) as { messageId?: string; publishTime?: string };
        const publishTime = Date.parse(m.publishTime ?? '');
        if (m.messageId === undefined || Number.isNaN(publishTime)) {
          reject(new Error(`${topic}: the reader sent ${data.toString('utf8')}`));
          return;
        }
        held.push({ messageId: m.messageId, publishTime });
        if (held.length === count) resolve(held);
      });
      socket.on('error', reject);
      socket.once('close', (code) => {
        reject(new Error(`reader on ${topic} closed (${String(code)}) after ${held.length}`));
      });
    });
  } finally {
    socket.removeAllListeners('close');
    socket.close();
  }
}

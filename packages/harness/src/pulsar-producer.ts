import WebSocket from 'ws';

/**
 * Produces `payloads` to one partition's topic (`persistent://…-partition-N`)
 * through the broker's WebSocket producer endpoint, batching off (one
 * message per entry), and returns each message's id (base64
 * MessageIdData), in order, once the broker answered every send with
 * `{"result":"ok"}`. Anything else fails, naming the message.
 */
export async function producePulsar(
  wsUrl: string,
  topic: string,
  payloads: readonly string[],
): Promise<string[]> {
  const path = topic.replace(/^persistent:\/\//, 'persistent/');
  const socket = new WebSocket(`${wsUrl}/ws/v2/producer/${path}?batchingEnabled=false`);
  try {
    await new Promise<void>((resolve, reject) => {
      socket.once('open', resolve);
      socket.once('error', reject);
      socket.once('unexpected-response', (_, res) => {
        reject(new Error(`producer on ${topic} refused: HTTP ${String(res.statusCode)}`));
      });
    });
    const ids = new Array<string>(payloads.length).fill('');
    let left = payloads.length;
    const done = new Promise<void>((resolve, reject) => {
      if (left === 0) resolve();
      socket.on('message', (data: Buffer) => {
        const text = data.toString('utf8');
        const answer = JSON.parse(text) as {
          result?: string;
          messageId?: string;
          context?: string;
        };
        if (answer.result !== 'ok' || answer.messageId === undefined) {
          reject(new Error(`send ${String(answer.context)} to ${topic} failed: ${text}`));
          return;
        }
        ids[Number(answer.context)] = answer.messageId;
        if (--left === 0) resolve();
      });
      socket.on('error', reject);
      socket.once('close', (code) => {
        reject(
          new Error(`producer on ${topic} closed (${String(code)}), ${String(left)} unanswered`),
        );
      });
    });
    payloads.forEach((p, index) => {
      socket.send(
        JSON.stringify({ payload: Buffer.from(p).toString('base64'), context: String(index) }),
      );
    });
    await done;
    return ids;
  } finally {
    socket.removeAllListeners('close');
    socket.close();
  }
}

import { pulsar } from '@thalweg/test-services';
import { afterAll, describe, expect, it } from 'vitest';
import type { PulsarMessage, ReadSettings, SessionClosed } from '../../src/index.js';
import { decodeMessageId, webSocketPort } from '../../src/index.js';
import { numbered, produce } from '../support/ws-producer.js';
import { createTopic, newTopic, until } from './admin.js';

/** Where an id places a message: a batched id from the producer has batch_size 0, the reader's the real size. */
const place = (id: string): string => {
  const { ledgerId, entryId, batchIndex } = decodeMessageId(id);
  return `${String(ledgerId)}:${String(entryId)}:${String(batchIndex)}`;
};

const port = webSocketPort({ wsUrl: pulsar().wsUrl, adminUrl: pulsar().adminUrl });
afterAll(() => port.close());

/** Reads `topic` from `start`, releasing each message as it arrives, until `n` came. */
async function readN(topic: string, start: ReadSettings['start'], n: number, queue = 1000) {
  const messages: PulsarMessage[] = [];
  const closed: SessionClosed[] = [];
  let release: (id: string) => void = () => undefined;
  const session = await port.read(
    { topic, start, receiverQueueSize: queue },
    {
      message: (m) => {
        messages.push(m);
        release(m.messageId);
      },
      closed: (why) => closed.push(why),
    },
  );
  release = (id) => {
    session.release(id);
  };
  // Messages that came before `release` was bound are released now.
  for (const m of messages) session.release(m.messageId);
  await until(() => messages.length >= n, `${String(n)} messages from the reader`);
  await session.close();
  expect(closed).toEqual([{ code: 1000, detail: 'closed by the client' }]);
  return messages;
}

describe('webSocketPort reader (Pulsar)', () => {
  it('resumes exactly after a stored id, inside a batch too', async () => {
    const topic = newTopic('twg-ws-reader');
    await createTopic(topic);
    const ids = await produce(pulsar().wsUrl, topic, numbered('r', 30), {
      batchingMaxMessages: 10,
    });
    const inBatch = ids.findIndex((id, i) => i < 28 && decodeMessageId(id).batchIndex > 0);
    expect(inBatch).toBeGreaterThan(0);

    const all = await readN(topic, { kind: 'earliest' }, 30);
    expect(all.map((m) => place(m.messageId))).toEqual(ids.map(place));

    // The cursor stores the id the reader delivered.
    const after = all[inBatch]?.messageId ?? '';
    const rest = await readN(topic, { kind: 'after', messageId: after }, 30 - inBatch - 1);
    expect(rest.map((m) => m.messageId)).toEqual(all.slice(inBatch + 1).map((m) => m.messageId));
    expect(new TextDecoder().decode(rest[0]?.payload)).toBe(`r-${String(inBatch + 1)}`);
  });

  it('keeps reading past its queue only because each message is released', async () => {
    const topic = newTopic('twg-ws-release');
    await createTopic(topic);
    const ids = await produce(pulsar().wsUrl, topic, numbered('q', 12));
    // A queue of 2: without the flow tokens the reader would stop at 2.
    const all = await readN(topic, { kind: 'earliest' }, 12, 2);
    expect(all.map((m) => m.messageId)).toEqual(ids);
  });

  it('refuses a start id that is not a message id, and a queue the API does not allow', async () => {
    const topic = newTopic('twg-ws-badstart');
    const events = { message: () => undefined, closed: () => undefined };
    await expect(
      port.read(
        { topic, start: { kind: 'after', messageId: 'a-b' }, receiverQueueSize: 1 },
        events,
      ),
    ).rejects.toMatchObject({ code: 'TWG_PULSAR_CURSOR_INVALID' });
    await expect(
      port.read({ topic, start: { kind: 'earliest' }, receiverQueueSize: 1001 }, events),
    ).rejects.toMatchObject({ code: 'TWG_PULSAR_MISUSE' });
  });
});

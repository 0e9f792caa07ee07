import { pulsar } from '@thalweg/test-services';
import { afterAll, describe, expect, it } from 'vitest';
import type { PulsarMessage, SessionClosed, SubscribeSettings } from '../../src/index.js';
import { webSocketPort } from '../../src/index.js';
import { numbered, produce } from '../support/ws-producer.js';
import { backlog, createTopic, dispatched, newTopic, until } from './admin.js';

const port = webSocketPort({
  wsUrl: pulsar().wsUrl,
  adminUrl: pulsar().adminUrl,
  nackRedeliveryDelayMs: 100,
});
afterAll(() => port.close());

function recorder() {
  const messages: PulsarMessage[] = [];
  const closed: SessionClosed[] = [];
  return {
    messages,
    closed,
    events: {
      message: (m: PulsarMessage) => messages.push(m),
      closed: (why: SessionClosed) => closed.push(why),
    },
  };
}

function settings(topic: string, subscription = 'twg'): SubscribeSettings {
  return {
    topic,
    subscription,
    type: 'Shared',
    initialPosition: 'Earliest',
    receiverQueueSize: 1000,
  };
}

const text = (m: PulsarMessage): string => new TextDecoder().decode(m.payload);

describe('webSocketPort consumer (Pulsar)', () => {
  it('delivers nothing before a permit, and exactly N after permit(N)', async () => {
    const topic = newTopic('twg-ws-pull');
    await createTopic(topic);
    const ids = await produce(pulsar().wsUrl, topic, numbered('m', 5));
    const rec = recorder();
    const session = await port.subscribe(settings(topic), rec.events);
    // The broker has handed all five to the WebSocket API's own consumer:
    // in push mode they would be on their way to us now.
    await until(async () => (await dispatched(topic, 'twg')) === 5, 'the dispatch to the proxy');
    session.permit(2);
    await until(() => rec.messages.length >= 2, 'two messages');
    session.permit(1);
    await until(() => rec.messages.length >= 3, 'a third message');
    // The broker's close comes after anything it sent before: nothing beyond the permits.
    await session.close();
    expect(rec.messages.map(text)).toEqual(['m-0', 'm-1', 'm-2']);
    expect(rec.messages.map((m) => m.messageId)).toEqual(ids.slice(0, 3));
    expect(rec.closed).toEqual([{ code: 1000, detail: 'closed by the client' }]);
  });

  it('removes acknowledged messages from the backlog, and redelivers a nacked one with the same id', async () => {
    const topic = newTopic('twg-ws-ack');
    await createTopic(topic);
    await produce(pulsar().wsUrl, topic, numbered('a', 3));
    const rec = recorder();
    const session = await port.subscribe(settings(topic), rec.events);
    session.permit(3);
    await until(() => rec.messages.length === 3, 'three messages');
    const [first, second, third] = rec.messages;
    if (first === undefined || second === undefined || third === undefined) throw new Error('3');
    expect(await backlog(topic, 'twg')).toBe(3);
    session.ack(first.messageId);
    session.ack(second.messageId);
    await until(async () => (await backlog(topic, 'twg')) === 1, 'a backlog of one');

    session.nack(third.messageId);
    session.permit(1);
    await until(() => rec.messages.length === 4, 'the redelivery');
    const again = rec.messages[3];
    expect(again?.messageId).toBe(third.messageId);
    expect(again?.redeliveryCount).toBe(1);
    expect(again === undefined ? '' : text(again)).toBe('a-2');
    session.ack(third.messageId);
    await until(async () => (await backlog(topic, 'twg')) === 0, 'an empty backlog');
    await session.close();
  });

  it('hands over payload, key, properties, event and publish time exactly', async () => {
    const topic = newTopic('twg-ws-fields');
    await createTopic(topic);
    const binary = new Uint8Array([0, 1, 2, 127, 128, 254, 255, 0]);
    const eventTime = Date.UTC(2026, 11, 1, 10, 11, 12, 345);
    const before = Date.now();
    const ids = await produce(pulsar().wsUrl, topic, [
      {
        payload: binary,
        key: '',
        properties: { 'ünï-cödé': 'värde ✓', '7': 'seven', empty: '' },
        eventTime,
      },
      { payload: new Uint8Array(0), key: 'k ü' },
    ]);
    const after = Date.now();
    const rec = recorder();
    const session = await port.subscribe(settings(topic), rec.events);
    session.permit(2);
    await until(() => rec.messages.length === 2, 'two messages');
    await session.close();
    const [a, b] = rec.messages;
    expect(a?.messageId).toBe(ids[0]);
    expect(a?.payload).toEqual(binary);
    expect(a?.key).toBe('');
    expect(new Map(a?.properties)).toEqual(
      new Map([
        ['ünï-cödé', 'värde ✓'],
        ['7', 'seven'],
        ['empty', ''],
      ]),
    );
    expect(a?.eventTime).toBe(eventTime);
    expect(b?.payload).toEqual(new Uint8Array(0));
    expect(b?.key).toBe('k ü');
    expect(b?.properties).toEqual([]);
    expect(b?.eventTime).toBeNull();
    for (const m of rec.messages) {
      expect(m.publishTime).toBeGreaterThanOrEqual(before - 1);
      expect(m.publishTime).toBeLessThanOrEqual(after + 1);
      expect(m.redeliveryCount).toBe(0);
    }
    // A reader of the same topic sees the same publish time, to the millisecond.
    const reader = recorder();
    const r = await port.read(
      { topic, start: { kind: 'earliest' }, receiverQueueSize: 10 },
      reader.events,
    );
    await until(() => reader.messages.length === 2, 'the reader');
    await r.close();
    expect(reader.messages.map((m) => m.publishTime)).toEqual(
      rec.messages.map((m) => m.publishTime),
    );
  });

  it('refuses a second consumer on an Exclusive subscription, and reports its own close once', async () => {
    const topic = newTopic('twg-ws-excl');
    await createTopic(topic);
    const exclusive = { ...settings(topic), type: 'Exclusive' as const };
    const rec = recorder();
    const session = await port.subscribe(exclusive, rec.events);
    await expect(port.subscribe(exclusive, recorder().events)).rejects.toMatchObject({
      code: 'TWG_PULSAR_BROKER_UNREACHABLE',
      message: expect.stringMatching(/refused .*HTTP \d{3}/) as string,
    });
    await session.close();
    await session.close();
    session.permit(1);
    expect(rec.closed).toEqual([{ code: 1000, detail: 'closed by the client' }]);
  });

  it('names the topic of a namespace that does not exist', async () => {
    const topic = 'persistent://public/no-such-namespace-twg/t';
    await expect(port.subscribe(settings(topic), recorder().events)).rejects.toMatchObject({
      code: 'TWG_PULSAR_TOPIC_UNKNOWN',
      message: expect.stringContaining(topic) as string,
    });
  });
});

import { createServer, type Server, type Socket } from 'node:net';
import { Changes } from '@thalweg/test-services';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import type {
  ConsumerSession,
  PulsarMessage,
  ReaderSession,
  SessionClosed,
} from '../../src/index.js';
import { webSocketPort } from '../../src/index.js';

// A local WebSocket server stands in for the broker, so the faults a real
// broker will not produce on demand (a dropped connection, a frame that
// cannot be read, a refused upgrade, silence) are injected exactly.
// Every place that records what a test awaits (a frame the fake server got, a
// message or close the session reported, a ping, a log line) pokes `changes`,
// so a wait ends on the event itself.

const ID = 'CBQQADAA';
const FRAME = JSON.stringify({
  messageId: ID,
  payload: 'AAE=',
  properties: {},
  publishTime: '2026-12-01T10:11:47.29Z',
  redeliveryCount: 0,
});

interface Fake {
  readonly url: string;
  /** The server side of each session the port opened, with the frames it sent. */
  readonly sockets: { socket: WebSocket; url: string; frames: string[] }[];
  close(): Promise<void>;
}

const changes = new Changes();
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((c) => c()));
});

async function fakeBroker(
  options: { refuse?: number; autoPong?: boolean; greet?: readonly string[] } = {},
): Promise<Fake> {
  const server = new WebSocketServer({
    port: 0,
    host: '127.0.0.1',
    autoPong: options.autoPong ?? true,
    ...(options.refuse === undefined
      ? {}
      : {
          verifyClient: (
            _: unknown,
            done: (ok: boolean, code?: number, message?: string) => void,
          ) => {
            done(false, options.refuse, 'Failed to create consumer: Namespace not found');
          },
        }),
  });
  await new Promise<void>((resolve) => server.once('listening', resolve));
  const sockets: Fake['sockets'] = [];
  server.on('connection', (socket, request) => {
    const entry = { socket, url: request.url ?? '', frames: [] as string[] };
    socket.on('message', (data: Buffer) => {
      entry.frames.push(data.toString('utf8'));
      changes.poke();
    });
    sockets.push(entry);
    for (const frame of options.greet ?? []) socket.send(frame);
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  const fake: Fake = {
    url: `ws://127.0.0.1:${String(address.port)}`,
    sockets,
    close: () =>
      new Promise((resolve) => {
        for (const { socket } of sockets) socket.terminate();
        server.close(() => resolve());
      }),
  };
  cleanups.push(() => fake.close());
  return fake;
}

function recorder() {
  const messages: PulsarMessage[] = [];
  const closed: SessionClosed[] = [];
  let resolveClosed: () => void = () => undefined;
  const once = new Promise<void>((resolve) => (resolveClosed = resolve));
  return {
    messages,
    closed,
    closedOnce: once,
    events: {
      message: (m: PulsarMessage) => {
        messages.push(m);
        changes.poke();
      },
      closed: (why: SessionClosed) => {
        closed.push(why);
        changes.poke();
        resolveClosed();
      },
    },
  };
}

async function consumer(fake: Fake, rec: ReturnType<typeof recorder>): Promise<ConsumerSession> {
  const port = webSocketPort({ wsUrl: fake.url, adminUrl: 'http://127.0.0.1:1' });
  cleanups.push(() => port.close());
  return port.subscribe(
    {
      topic: 'persistent://public/default/t',
      subscription: 's',
      type: 'Shared',
      initialPosition: 'Earliest',
      receiverQueueSize: 7,
    },
    rec.events,
  );
}

describe('a WebSocket session against a fake broker', () => {
  it('asks for pull mode and sends permits, acks and nacks as the API reads them', async () => {
    const fake = await fakeBroker();
    const rec = recorder();
    const session = await consumer(fake, rec);
    expect(fake.sockets[0]?.url).toBe(
      '/ws/v2/consumer/persistent/public/default/t/s?subscriptionType=Shared&subscriptionInitialPosition=Earliest&pullMode=true&receiverQueueSize=7',
    );
    session.permit(3);
    fake.sockets[0]?.socket.send(FRAME);
    await changes.until(() => rec.messages.length === 1, 'the message');
    session.nack(ID);
    session.ack(ID);
    await changes.until(() => fake.sockets[0]?.frames.length === 3, 'permit, nack and ack');
    expect(fake.sockets[0]?.frames.map((f) => JSON.parse(f) as unknown)).toEqual([
      { type: 'permit', permitMessages: 3 },
      { type: 'negativeAcknowledge', messageId: ID },
      { messageId: ID },
    ]);
  });

  it('refuses to send an id it did not deliver, or one already acknowledged', async () => {
    const fake = await fakeBroker();
    const rec = recorder();
    const session = await consumer(fake, rec);
    expect(() => session.ack('CAYQADAA')).toThrow(/TWG_PULSAR_MISUSE|did not deliver/);
    fake.sockets[0]?.socket.send(FRAME);
    await changes.until(() => rec.messages.length === 1, 'the message');
    session.ack(ID);
    expect(() => session.ack(ID)).toThrow(/already settled/);
    expect(() => session.permit(0)).toThrow(/at least 1/);
  });

  it('reports a connection the broker drops exactly once, with its code, and then sends nothing', async () => {
    const fake = await fakeBroker();
    const rec = recorder();
    const session = await consumer(fake, rec);
    fake.sockets[0]?.socket.send(FRAME);
    await changes.until(() => rec.messages.length === 1, 'the message');
    fake.sockets[0]?.socket.terminate();
    await rec.closedOnce;
    expect(rec.closed).toEqual([{ code: 1006, detail: 'closed by the broker' }]);
    // After the close: no-ops, never throws (the id was delivered, the session is gone).
    session.ack(ID);
    session.nack('not even base64');
    session.permit(5);
    await session.close();
    expect(rec.closed).toHaveLength(1);
  });

  it('reports the code and reason of a close the broker sends', async () => {
    const fake = await fakeBroker();
    const rec = recorder();
    await consumer(fake, rec);
    fake.sockets[0]?.socket.close(1011, 'Illegal base64 character 2d');
    await rec.closedOnce;
    expect(rec.closed).toEqual([{ code: 1011, detail: 'Illegal base64 character 2d' }]);
  });

  it('ends the session on a frame it cannot read, and delivers nothing after it', async () => {
    const fake = await fakeBroker();
    const rec = recorder();
    await consumer(fake, rec);
    const server = fake.sockets[0];
    const serverSawClose = new Promise<number>((resolve) => server?.socket.once('close', resolve));
    server?.socket.send(JSON.stringify({ messageId: ID, payload: 'not base64!' }));
    server?.socket.send(FRAME);
    await rec.closedOnce;
    expect(rec.closed).toEqual([
      {
        code: null,
        detail: expect.stringMatching(/cannot be read: payload of CBQQADAA/) as string,
      },
    ]);
    expect(await serverSawClose).toBe(1011);
    expect(rec.messages).toHaveLength(0);
  });

  it('ends the session when the message handler throws, instead of an uncaught exception', async () => {
    const fake = await fakeBroker();
    const closed: SessionClosed[] = [];
    const port = webSocketPort({ wsUrl: fake.url, adminUrl: 'http://127.0.0.1:1' });
    cleanups.push(() => port.close());
    await port.read(
      {
        topic: 'persistent://public/default/t',
        start: { kind: 'earliest' },
        receiverQueueSize: 10,
      },
      {
        message: () => {
          throw new Error('boom');
        },
        closed: (why) => {
          closed.push(why);
          changes.poke();
        },
      },
    );
    fake.sockets[0]?.socket.send(FRAME);
    await changes.until(() => closed.length === 1, 'the close');
    expect(closed[0]?.detail).toMatch(/handler threw: boom/);
  });

  it('hands on frames sent with the upgrade, after the caller holds the session', async () => {
    const second = FRAME.replace(ID, 'CBQQATAA');
    const fake = await fakeBroker({ greet: [FRAME, second] });
    const port = webSocketPort({ wsUrl: fake.url, adminUrl: 'http://127.0.0.1:1' });
    cleanups.push(() => port.close());
    const got: string[] = [];
    const closed: SessionClosed[] = [];
    const holder: { session?: ReaderSession } = {};
    holder.session = await port.read(
      { topic: 'persistent://public/default/t', start: { kind: 'earliest' }, receiverQueueSize: 5 },
      {
        message: (m) => {
          got.push(m.messageId);
          if (holder.session === undefined) throw new Error('no session yet');
          holder.session.release(m.messageId);
        },
        closed: (why) => closed.push(why),
      },
    );
    await changes.until(() => fake.sockets[0]?.frames.length === 2, 'both releases');
    expect(got).toEqual([ID, 'CBQQATAA']);
    expect(fake.sockets[0]?.frames).toEqual([`{"messageId":"${ID}"}`, '{"messageId":"CBQQATAA"}']);
    expect(closed).toEqual([]);
  });

  it('keeps pinging a quiet session that answers, and ends one whose pongs stop', async () => {
    const answering = await fakeBroker();
    const pings: number[] = [];
    const quiet = recorder();
    const port = webSocketPort({
      wsUrl: answering.url,
      adminUrl: 'http://127.0.0.1:1',
      pingIntervalMs: 20,
    });
    cleanups.push(() => port.close());
    const settings = {
      topic: 'persistent://public/default/t',
      start: { kind: 'latest' },
      receiverQueueSize: 1,
    } as const;
    await port.read(settings, quiet.events);
    answering.sockets[0]?.socket.on('ping', () => {
      pings.push(Date.now());
      changes.poke();
    });
    await changes.until(() => pings.length >= 5, 'five pings');
    expect(quiet.closed).toEqual([]);

    const mute = await fakeBroker({ autoPong: false });
    const dead = recorder();
    const deadPort = webSocketPort({
      wsUrl: mute.url,
      adminUrl: 'http://127.0.0.1:1',
      pingIntervalMs: 20,
    });
    cleanups.push(() => deadPort.close());
    await deadPort.read(settings, dead.events);
    await dead.closedOnce;
    expect(dead.closed).toEqual([{ code: null, detail: 'no pong within 20 ms (pingIntervalMs)' }]);
  });

  it('logs a closed handler that throws, instead of an uncaught exception', async () => {
    const fake = await fakeBroker();
    const lines: string[] = [];
    const port = webSocketPort({
      wsUrl: fake.url,
      adminUrl: 'http://127.0.0.1:1',
      log: (line) => {
        lines.push(line);
        changes.poke();
      },
    });
    cleanups.push(() => port.close());
    await port.read(
      { topic: 'persistent://public/default/t', start: { kind: 'earliest' }, receiverQueueSize: 1 },
      {
        message: () => undefined,
        closed: () => {
          throw new Error('closed boom');
        },
      },
    );
    fake.sockets[0]?.socket.terminate();
    await changes.until(() => lines.some((l) => l.includes('closed boom')), 'the log line');
    expect(lines.filter((l) => l.includes('threw: closed boom'))).toHaveLength(1);
  });

  it('closes every session on port.close(), reporting 1000 once each', async () => {
    const fake = await fakeBroker();
    const port = webSocketPort({ wsUrl: fake.url, adminUrl: 'http://127.0.0.1:1' });
    const a = recorder();
    const b = recorder();
    const settings = {
      topic: 'persistent://public/default/t',
      subscription: 's',
      type: 'Shared',
      initialPosition: 'Earliest',
      receiverQueueSize: 1000,
    } as const;
    await port.subscribe(settings, a.events);
    await port.read(
      { topic: settings.topic, start: { kind: 'latest' }, receiverQueueSize: 5 },
      b.events,
    );
    await port.close();
    expect(a.closed).toEqual([{ code: 1000, detail: 'closed by the client' }]);
    expect(b.closed).toEqual([{ code: 1000, detail: 'closed by the client' }]);
    await expect(port.subscribe(settings, a.events)).rejects.toThrow(/after the port was closed/);
  });

  it('names the topic when the upgrade is refused with 404, and the URL on another status', async () => {
    const missing = await fakeBroker({ refuse: 404 });
    const rec = recorder();
    await expect(consumer(missing, rec)).rejects.toMatchObject({
      code: 'TWG_PULSAR_TOPIC_UNKNOWN',
      message: expect.stringContaining('persistent://public/default/t') as string,
    });
    const failing = await fakeBroker({ refuse: 500 });
    await expect(consumer(failing, rec)).rejects.toMatchObject({
      code: 'TWG_PULSAR_BROKER_UNREACHABLE',
      message: expect.stringContaining(`${failing.url}/ws/v2/consumer/`) as string,
    });
    expect(rec.closed).toHaveLength(0);
  });

  it('gives up on a broker that accepts the connection but never answers, within connectTimeoutMs', async () => {
    const held: Socket[] = [];
    const silent: Server = createServer((socket) => held.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    cleanups.push(
      () =>
        new Promise((resolve) => {
          for (const socket of held) socket.destroy();
          silent.close(() => resolve());
        }),
    );
    const address = silent.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    const port = webSocketPort({
      wsUrl: `ws://127.0.0.1:${String(address.port)}`,
      adminUrl: 'http://127.0.0.1:1',
      connectTimeoutMs: 200,
    });
    await expect(
      port.read(
        {
          topic: 'persistent://public/default/t',
          start: { kind: 'earliest' },
          receiverQueueSize: 1,
        },
        recorder().events,
      ),
    ).rejects.toMatchObject({
      code: 'TWG_PULSAR_BROKER_UNREACHABLE',
      message: expect.stringMatching(/did not open a session within 200 ms/) as string,
    });
  });
});

import { Socket } from 'node:net';
import { Changes } from '@thalweg/test-services';
import { afterEach, describe, expect, it, vi } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { webSocketPort } from '../../src/index.js';
import { wireOf } from '../../src/ws-session.js';

// What leaves this side in how many writes: the writes are counted where
// a net socket hands them to the system (`_write`, or `_writev` for what a
// cork gathered); a local WebSocket server takes the frames.

interface Counted {
  frames: string[];
  /** The permessage-deflate extension, when the client offered it. */
  extensions: string;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((c) => c()));
});

async function countingServer(changes: Changes): Promise<{ url: string; seen: Counted[] }> {
  const server = new WebSocketServer({ port: 0, host: '127.0.0.1', perMessageDeflate: true });
  await new Promise<void>((resolve) => server.once('listening', resolve));
  const seen: Counted[] = [];
  server.on('connection', (socket, request) => {
    const counted: Counted = {
      frames: [],
      extensions: request.headers['sec-websocket-extensions'] ?? '',
    };
    socket.on('message', (data: Buffer) => {
      counted.frames.push(data.toString('utf8'));
      changes.poke();
    });
    seen.push(counted);
    changes.poke();
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  cleanups.push(
    () =>
      new Promise((resolve) => {
        for (const client of server.clients) client.terminate();
        server.close(() => resolve());
      }),
  );
  return { url: `ws://127.0.0.1:${String(address.port)}`, seen };
}

const SETTINGS = {
  topic: 'persistent://public/default/t',
  subscription: 's',
  type: 'Shared',
  initialPosition: 'Earliest',
  receiverQueueSize: 1000,
} as const;

describe('the frames a session sends', () => {
  it('leave in one write when sent in one burst (a commit acks many messages)', async () => {
    const changes = new Changes();
    const server = await countingServer(changes);
    const port = webSocketPort({ wsUrl: server.url, adminUrl: 'http://127.0.0.1:1' });
    cleanups.push(() => port.close());
    const session = await port.subscribe(SETTINGS, {
      message: () => undefined,
      closed: () => undefined,
    });
    await changes.until(() => server.seen.length === 1, 'the session to open');
    const counted = server.seen[0];
    if (counted === undefined) throw new Error('no session');
    const write = vi.spyOn(Socket.prototype, '_write');
    const writev = vi.spyOn(Socket.prototype, '_writev');
    cleanups.push(() => {
      vi.restoreAllMocks();
      return Promise.resolve();
    });
    for (let i = 1; i <= 200; i++) session.permit(i);
    await changes.until(() => counted.frames.length === 200, '200 permit frames');
    expect(counted.frames.at(-1)).toBe('{"type":"permit","permitMessages":200}');
    // Uncorked, each frame would be a write of its own.
    expect({ write: write.mock.calls.length, writev: writev.mock.calls.length }).toEqual({
      write: 0,
      writev: 1,
    });
  });

  it('offers no compression unless asked', async () => {
    const changes = new Changes();
    const server = await countingServer(changes);
    const plain = webSocketPort({ wsUrl: server.url, adminUrl: 'http://127.0.0.1:1' });
    const deflating = webSocketPort({
      wsUrl: server.url,
      adminUrl: 'http://127.0.0.1:1',
      perMessageDeflate: true,
    });
    cleanups.push(
      () => plain.close(),
      () => deflating.close(),
    );
    const events = { message: () => undefined, closed: () => undefined };
    await plain.subscribe(SETTINGS, events);
    await changes.until(() => server.seen.length === 1, 'the first session');
    await deflating.subscribe(SETTINGS, events);
    await changes.until(() => server.seen.length === 2, 'the second session');
    expect(server.seen.map((s) => s.extensions.includes('permessage-deflate'))).toEqual([
      false,
      true,
    ]);
  });

  it('reach the connection under ws, which keeps it where wireOf looks', async () => {
    // An upgrade of ws that moved it would lose the coalescing silently; this says so.
    const changes = new Changes();
    const server = await countingServer(changes);
    const socket = new WebSocket(server.url);
    cleanups.push(async () => {
      socket.terminate();
      await Promise.resolve();
    });
    await new Promise<void>((resolve) => socket.once('open', () => resolve()));
    expect(wireOf(socket)).not.toBeNull();
  });
});

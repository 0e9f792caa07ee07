import { Server, ServerCredentials, type UntypedServiceImplementation } from '@grpc/grpc-js';
import { afterEach } from 'vitest';
import { flightClient, type FlightClient } from '../src/flight-client.js';
import type { FlightDescriptor } from '../src/flight-messages.js';
import { flightServer, type FlightServerHandlers } from '../src/flight-server.js';
import { flightServiceDefinition, type FlightMethod } from '../src/flight-service.js';
import { text, type Row } from './fixtures.js';

/**
 * Servers and clients for the client tests, each closed after its test:
 * `serve` starts our server helper, `serveRaw` a bare grpc-js server with
 * hand-written methods (to send what our helper never would).
 */
export function flightHarness(): {
  serve: (
    handlers: FlightServerHandlers,
    options?: { readonly maxMessageBytes?: number },
  ) => Promise<FlightClient>;
  serveRaw: (
    methods: readonly FlightMethod[],
    impl: UntypedServiceImplementation,
  ) => Promise<FlightClient>;
  connect: (url: string) => FlightClient;
} {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  const connect = (url: string) => {
    const client = flightClient(url);
    cleanups.push(() => client.close());
    return client;
  };
  return {
    connect,
    serve: async (handlers, options) => {
      const server = await flightServer(handlers, options);
      cleanups.push(() => server.close());
      return connect(server.url);
    },
    serveRaw: async (methods, impl) => {
      const server = new Server();
      server.addService(flightServiceDefinition(methods), impl);
      const port = await new Promise<number>((resolve, reject) =>
        server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (e, p) =>
          e ? reject(e) : resolve(p),
        ),
      );
      cleanups.push(() => server.forceShutdown());
      return connect(`grpc+tcp://127.0.0.1:${port}`);
    },
  };
}

/** Three batches of the generated-stream schema: int64 extremes, UTF-8, timestamps, nulls. */
export const BATCHES: Row[][] = [
  [
    { id: 0n, payload: 'zero', ts: 1_764_633_600_000 },
    { id: 1n, payload: null, ts: null },
  ],
  [{ id: 2n ** 62n, payload: 'größer', ts: -1 }],
  [
    { id: -5n, payload: '', ts: 0 },
    { id: 6n, payload: 'six', ts: 6 },
    { id: 7n, payload: null, ts: 7 },
  ],
];

export const DATASET: FlightDescriptor = { type: 'path', path: ['orders'] };

/**
 * Whether `p` is still unsettled once every callback already due has run:
 * a write that can go resolves within the microtasks and I/O callbacks
 * before the next check phase (setImmediate); a held one waits for 'drain'.
 */
export async function isPending(p: Promise<unknown>): Promise<boolean> {
  let settled = false;
  void p.then(
    () => (settled = true),
    () => (settled = true),
  );
  await new Promise<void>((resolve) => setImmediate(resolve));
  return !settled;
}

/** The next item of `items` as text; fails when the iteration has ended. */
export async function nextText(items: AsyncIterator<Uint8Array>): Promise<string | null> {
  const next = await items.next();
  if (next.done === true) throw new Error('the results ended early');
  return text(next.value);
}

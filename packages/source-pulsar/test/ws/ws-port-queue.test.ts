import { describe, expect, it } from 'vitest';
import type { SessionEvents } from '../../src/index.js';
import { webSocketPort } from '../../src/index.js';

const events: SessionEvents = { message: () => undefined, closed: () => undefined };
const settings = {
  topic: 'persistent://public/default/t',
  subscription: 's',
  type: 'Shared',
  initialPosition: 'Earliest',
} as const;

describe("a WebSocket port's receiver queues", () => {
  it.each([0, 1001, 2.5])(
    'refuses a consumer queue of %s, naming it, before connecting',
    async (receiverQueueSize) => {
      // Nothing listens on port 1: a connection attempt would fail otherwise.
      const port = webSocketPort({ wsUrl: 'ws://127.0.0.1:1', adminUrl: 'http://127.0.0.1:1' });
      try {
        await expect(
          port.subscribe({ ...settings, receiverQueueSize }, events),
        ).rejects.toMatchObject({
          code: 'TWG_PULSAR_MISUSE',
          message: expect.stringContaining(
            `receiverQueueSize ${String(receiverQueueSize)} for a consumer of ${settings.topic}: 1 to 1000`,
          ) as unknown,
        });
      } finally {
        await port.close();
      }
    },
  );
});

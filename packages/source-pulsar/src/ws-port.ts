import { PulsarSourceError } from './errors.js';
import { decodeMessageId } from './message-id.js';
import { partitionCount, parseTopic } from './pulsar-admin.js';
import type {
  ConsumerSession,
  PulsarPort,
  ReaderSession,
  ReadSettings,
  SessionEvents,
  SubscribeSettings,
} from './pulsar-port.js';
import { ackFrame, nackFrame, permitFrame } from './ws-message.js';
import { openSocket, WsSession } from './ws-session.js';

export interface WebSocketPortOptions {
  /** Base of the WebSocket API, `ws://host:8080` (sessions under `/ws/v2/...`). */
  readonly wsUrl: string;
  /** Base of the admin REST API, `http://host:8080`. */
  readonly adminUrl: string;
  /** How long opening a session or an admin call may take (default 10,000 ms). */
  readonly connectTimeoutMs?: number;
  /**
   * How long after a `nack` the broker redelivers (`negativeAckRedeliveryDelay`);
   * unset: the broker's client default, one minute.
   */
  readonly nackRedeliveryDelayMs?: number;
  /**
   * How often each session pings the broker (default 30,000 ms, a tenth of
   * the broker's default idle timeout of 300 s). A ping unanswered by the
   * next one ends the session.
   */
  readonly pingIntervalMs?: number;
  /**
   * Offer permessage-deflate (default false). Off, because on loopback the
   * compression cost this side more CPU than the broker took to send (the
   * bench: 107 against 15 µs per message); worth it only over a slow link.
   */
  readonly perMessageDeflate?: boolean;
  readonly log?: (line: string) => void;
}

/** The proxy's cap on a consumer's or reader's receiver queue. */
const MAX_RECEIVER_QUEUE = 1000;

function misuse(message: string): PulsarSourceError {
  return new PulsarSourceError('TWG_PULSAR_MISUSE', message);
}

/**
 * The port over Pulsar's WebSocket API (ADR 0032): consumers in pull mode
 * with individual acks, readers whose flow tokens are sent back per
 * message, and partition counts from the admin API.
 */
export function webSocketPort(options: WebSocketPortOptions): PulsarPort {
  const wsBase = options.wsUrl.replace(/\/+$/, '');
  const timeoutMs = options.connectTimeoutMs ?? 10_000;
  const pingIntervalMs = options.pingIntervalMs ?? 30_000;
  const log = options.log ?? (() => undefined);
  const sessions = new Set<WsSession>();
  // Read through a function: `close()` may flip it while `open` awaits the socket.
  let closed = false;
  const isClosed = (): boolean => closed;

  async function open(url: string, topic: string, events: SessionEvents, description: string) {
    if (isClosed()) throw misuse(`${description} asked for after the port was closed`);
    const opened = await openSocket(url, topic, timeoutMs, options.perMessageDeflate ?? false);
    if (isClosed()) {
      opened.socket.close(1000, 'closed by the client');
      throw misuse(`${description} opened after the port was closed`);
    }
    const session = new WsSession(
      opened,
      events,
      description,
      log,
      (s) => sessions.delete(s),
      pingIntervalMs,
    );
    sessions.add(session);
    log(`pulsar: ${description} open`);
    return session;
  }

  return {
    partitions: (topic) => partitionCount(options.adminUrl, topic, timeoutMs),

    async subscribe(settings: SubscribeSettings, events: SessionEvents): Promise<ConsumerSession> {
      const topic = parseTopic(settings.topic);
      if (settings.subscription === '')
        throw misuse(`an empty subscription name on ${settings.topic}`);
      const size = checkedQueueSize(settings.receiverQueueSize, `a consumer of ${settings.topic}`);
      const query = new URLSearchParams({
        subscriptionType: settings.type,
        subscriptionInitialPosition: settings.initialPosition,
        pullMode: 'true',
        receiverQueueSize: String(size),
      });
      if (settings.consumerName !== undefined) query.set('consumerName', settings.consumerName);
      if (options.nackRedeliveryDelayMs !== undefined) {
        query.set('negativeAckRedeliveryDelay', String(options.nackRedeliveryDelayMs));
      }
      const url = `${wsBase}/ws/v2/consumer/${topic.path}/${encodeURIComponent(settings.subscription)}?${query.toString()}`;
      const session = await open(
        url,
        settings.topic,
        events,
        `consumer of ${settings.topic} on subscription ${settings.subscription}`,
      );
      return {
        permit(n) {
          if (!Number.isSafeInteger(n) || n < 1) {
            throw misuse(`permit(${String(n)}) on ${session.description}: a count of at least 1`);
          }
          session.send(permitFrame(n));
        },
        ack(messageId) {
          session.sendAbout('ack', messageId, ackFrame(messageId), true);
        },
        nack(messageId) {
          // Not settled: the broker delivers it again, with the same id.
          session.sendAbout('nack', messageId, nackFrame(messageId), false);
        },
        close: () => session.close(),
      };
    },

    async read(settings: ReadSettings, events: SessionEvents): Promise<ReaderSession> {
      const topic = parseTopic(settings.topic);
      const size = checkedQueueSize(settings.receiverQueueSize, `a reader of ${settings.topic}`);
      if (settings.start.kind === 'after') {
        try {
          decodeMessageId(settings.start.messageId);
        } catch (cause) {
          throw new PulsarSourceError(
            'TWG_PULSAR_CURSOR_INVALID',
            `a reader of ${settings.topic} cannot start after ${JSON.stringify(settings.start.messageId)}: not a message id`,
            { cause },
          );
        }
      }
      const start =
        settings.start.kind === 'after' ? settings.start.messageId : settings.start.kind;
      const query = new URLSearchParams({ messageId: start, receiverQueueSize: String(size) });
      const url = `${wsBase}/ws/v2/reader/${topic.path}?${query.toString()}`;
      const session = await open(url, settings.topic, events, `reader of ${settings.topic}`);
      return {
        release(messageId) {
          session.sendAbout('release', messageId, ackFrame(messageId), true);
        },
        close: () => session.close(),
      };
    },

    async close() {
      closed = true;
      await Promise.all([...sessions].map((s) => s.close()));
    },
  };
}

/** A session's receiver queue size, refused outside 1..MAX_RECEIVER_QUEUE naming the session. */
function checkedQueueSize(size: number, who: string): number {
  if (!Number.isSafeInteger(size) || size < 1 || size > MAX_RECEIVER_QUEUE) {
    throw misuse(
      `receiverQueueSize ${String(size)} for ${who}: 1 to ${String(MAX_RECEIVER_QUEUE)}`,
    );
  }
  return size;
}

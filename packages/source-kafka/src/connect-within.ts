import type { ConsumerPort } from './consumer-port.js';
import { findSourceError, KafkaSourceError } from './errors.js';

function reason(cause: unknown): string {
  return cause instanceof Error ? cause.message : String(cause);
}

/**
 * Connects and subscribes within `timeoutMs`, or says why not, naming the
 * brokers. kafkajs retries a broker that refuses or drops the connection for
 * about ten seconds and then reports "Closed connection" or a refused
 * socket, sometimes without the address; a user needs the address, within a
 * time they chose.
 *
 * On the deadline the attempt is abandoned, not awaited: kafkajs may still be
 * retrying, so the consumer is disconnected once the attempt settles, and its
 * late outcome is observed here (never an unhandled rejection).
 */
export async function connectWithin(
  port: ConsumerPort,
  brokers: readonly string[],
  timeoutMs: number,
): Promise<KafkaSourceError | null> {
  // An object, not a `let`: the attempt moves it on while this function awaits.
  const progress: { stage: 'connect' | 'subscribe' } = { stage: 'connect' };
  const attempt = (async () => {
    await port.connect();
    progress.stage = 'subscribe';
    await port.subscribe();
  })();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => {
      resolve('timeout');
    }, timeoutMs);
  });
  const where = brokers.join(', ');
  try {
    const outcome = await Promise.race([attempt.then(() => 'done' as const), deadline]);
    if (outcome === 'done') return null;
    void attempt.then(
      () => port.disconnect().catch(() => undefined),
      () => undefined,
    );
    return new KafkaSourceError(
      'TWG_KAFKA_BROKER_UNREACHABLE',
      progress.stage === 'connect'
        ? `no broker of ${where} answered within ${timeoutMs} ms (connectTimeoutMs)`
        : `connected to ${where}, but subscribing took longer than ${timeoutMs} ms (connectTimeoutMs)`,
    );
  } catch (cause) {
    const known = findSourceError(cause);
    if (known !== undefined) return known;
    if (progress.stage === 'connect') {
      return new KafkaSourceError(
        'TWG_KAFKA_BROKER_UNREACHABLE',
        `could not connect to any broker of ${where}: ${reason(cause)}`,
        { cause },
      );
    }
    return new KafkaSourceError(
      'TWG_KAFKA_CONSUMER_FAILED',
      `connected to ${where}, but could not subscribe: ${reason(cause)}`,
      { cause },
    );
  } finally {
    clearTimeout(timer);
  }
}

import { ConfigError, type PartContext, type SourcePart } from '@thalweg/connector-core';
import {
  parseReaderOptions,
  parseSubscriptionOptions,
  type PulsarReaderOptions,
  type PulsarSubscriptionOptions,
} from './options.js';
import { PulsarReaderSource } from './pulsar-reader-source.js';
import type { PulsarPort } from './pulsar-port.js';
import { PulsarSubscriptionSource } from './pulsar-subscription-source.js';
import { webSocketPort } from './ws-port.js';

/**
 * Where the part reaches Pulsar: a port of the user's own, or the broker's
 * WebSocket and admin URLs, from which each open builds a `webSocketPort`
 * (the source closes its port when it closes).
 */
export type PulsarConnection =
  { readonly port: PulsarPort } | { readonly wsUrl: string; readonly adminUrl: string };

/** A subscription, declared: `pulsarSubscriptionSource`'s options without `log`/`debug` (the topology's). */
export type PulsarSubscriptionPartOptions = Omit<
  PulsarSubscriptionOptions,
  'log' | 'debug' | 'port'
> &
  PulsarConnection & { readonly reader?: false };
/** Readers, declared: `pulsarReaderSource`'s options without `log`/`debug`, and `reader: true`. */
export type PulsarReaderPartOptions = Omit<PulsarReaderOptions, 'log' | 'debug' | 'port'> &
  PulsarConnection & { readonly reader: true };
export type PulsarPartOptions = PulsarSubscriptionPartOptions | PulsarReaderPartOptions;

/**
 * Declares a Pulsar source; the topology opens it. A `subscription` says
 * subscription mode (broker-managed), `reader: true` reader mode
 * (store-managed, a message-id cursor in the offset store). The options
 * are validated here, a refusal naming the field (`pulsarSource.topics[0]`);
 * opened, the source logs through the context's log.
 */
export function pulsar(
  options: PulsarSubscriptionPartOptions,
): SourcePart<PulsarSubscriptionSource>;
export function pulsar(options: PulsarReaderPartOptions): SourcePart<PulsarReaderSource>;
export function pulsar(
  options: PulsarPartOptions,
): SourcePart<PulsarSubscriptionSource | PulsarReaderSource>;
export function pulsar(
  options: PulsarPartOptions,
): SourcePart<PulsarSubscriptionSource | PulsarReaderSource> {
  const given: unknown = options;
  for (const key of ['log', 'debug']) {
    if (typeof given === 'object' && given !== null && key in given) {
      throw new ConfigError(
        `pulsarSource.${key}`,
        "is not an option of pulsar(): it logs through the topology's log",
      );
    }
  }
  const { rest, port } = split(options);
  if (options.reader === true) {
    // Validated now, so a bad declaration fails where it is written.
    parseReaderOptions({ ...rest, port: port() });
    return {
      role: 'source',
      // `rest` is what parseReaderOptions just took; the source parses it again.
      open: (context) =>
        PulsarReaderSource.open({ ...rest, port: port(), ...logs(context) } as PulsarReaderOptions),
    };
  }
  parseSubscriptionOptions({ ...rest, port: port() });
  return {
    role: 'source',
    open: (context) =>
      new PulsarSubscriptionSource(
        parseSubscriptionOptions({ ...rest, port: port(), ...logs(context) }),
      ),
  };
}

/**
 * The options without the mode flag and the connection, and how to get a
 * port: the user's own, or a new `webSocketPort` per call (building one
 * does no I/O; the one built to validate is never opened).
 */
function split(options: PulsarPartOptions): {
  readonly rest: Record<string, unknown>;
  readonly port: () => PulsarPort;
} {
  const rest: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(options)) {
    if (!['reader', 'port', 'wsUrl', 'adminUrl'].includes(k)) rest[k] = v;
  }
  if ('port' in options) return { rest, port: () => options.port };
  for (const key of ['wsUrl', 'adminUrl'] as const) {
    if (typeof options[key] !== 'string' || options[key].length === 0) {
      throw new ConfigError(`pulsarSource.${key}`, 'must be the broker URL (or give `port`)');
    }
  }
  const { wsUrl, adminUrl } = options;
  return { rest, port: () => webSocketPort({ wsUrl, adminUrl }) };
}

function logs(context: PartContext) {
  return { log: context.log.info, debug: context.log.debug };
}

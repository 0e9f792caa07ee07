import { ConfigError, type PartContext, type SourcePart } from '@thalweg/connector-core';
import {
  parseReaderOptions,
  parseSubscriptionOptions,
  type PulsarReaderOptions,
  type PulsarSubscriptionOptions,
} from './options.js';
import { PulsarReaderSource } from './pulsar-reader-source.js';
import { PulsarSubscriptionSource } from './pulsar-subscription-source.js';

/** A subscription, declared: `pulsarSubscriptionSource`'s options without `log`/`debug` (the topology's). */
export type PulsarSubscriptionPartOptions = Omit<PulsarSubscriptionOptions, 'log' | 'debug'> & {
  readonly reader?: false;
};
/** Readers, declared: `pulsarReaderSource`'s options without `log`/`debug`, and `reader: true`. */
export type PulsarReaderPartOptions = Omit<PulsarReaderOptions, 'log' | 'debug'> & {
  readonly reader: true;
};
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
  if (options.reader === true) {
    const rest = withoutReader(options);
    // Validated now, so a bad declaration fails where it is written.
    parseReaderOptions(rest);
    return {
      role: 'source',
      open: (context) => PulsarReaderSource.open({ ...rest, ...logs(context) }),
    };
  }
  const rest = withoutReader(options);
  parseSubscriptionOptions(rest);
  return {
    role: 'source',
    open: (context) =>
      new PulsarSubscriptionSource(parseSubscriptionOptions({ ...rest, ...logs(context) })),
  };
}

function logs(context: PartContext) {
  return { log: context.log.info, debug: context.log.debug };
}

/** The options without the mode flag, which the source's own options do not know. */
function withoutReader<O extends { readonly reader?: boolean }>(options: O): Omit<O, 'reader'> {
  return Object.fromEntries(Object.entries(options).filter(([k]) => k !== 'reader')) as Omit<
    O,
    'reader'
  >;
}

import type { PartContext, SourcePart } from '@thalweg/connector-core';
import { FlightSource } from './flight-source.js';
import {
  describeFlightSourceOptions,
  resolveFlightSourceOptions,
  type FlightSourceOptions,
} from './flight-source-options.js';

/**
 * Declares a source over one Flight live stream (`ipcStream()`'s sibling);
 * the topology opens it. The options are checked here, a refusal naming the
 * field (`flight.stream`); opened, the source logs its effective settings
 * through the context's `debug`. Nothing connects before `batches()`.
 */
export function flight(options: FlightSourceOptions): SourcePart<FlightSource> {
  const resolved = resolveFlightSourceOptions(options);
  return {
    role: 'source',
    open(context: PartContext) {
      const source = new FlightSource(options);
      context.log.debug(`thalweg flight source: ${describeFlightSourceOptions(resolved)}`);
      return source;
    },
  };
}

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FlightError } from '../src/errors.js';
import {
  FlightBatchReader,
  batchFlightData,
  schemaFlightData,
} from '../src/flight-data-framing.js';
import { decodeFlightData, encodeFlightData } from '../src/flight-messages.js';
import { ROWS_SCHEMA, rowsBatch } from './fixtures.js';

// Bytes from the network may only end in a correct read or our own coded
// error: never a RangeError, a TypeError or an allocation by a corrupt length.
const first = schemaFlightData(ROWS_SCHEMA);
const batch = batchFlightData(
  rowsBatch([
    { id: 1n, payload: 'a', ts: 1 },
    { id: 2n, payload: null, ts: null },
    { id: 3n, payload: 'ccc', ts: 3 },
  ]),
  first.dataHeader,
  new TextEncoder().encode('{"offset":0}'),
);
const wire = [encodeFlightData(first), encodeFlightData(batch)];

function readAll(messages: readonly Uint8Array[]): void {
  const reader = new FlightBatchReader('fuzz');
  for (const bytes of messages) reader.read(decodeFlightData(bytes));
}

const flips = fc.array(fc.tuple(fc.nat(), fc.integer({ min: 1, max: 255 })), {
  minLength: 1,
  maxLength: 4,
});

describe('FlightData from the network', () => {
  it('reads the valid stream', () => {
    expect(() => readAll(wire)).not.toThrow();
  });

  it('ends a corrupted stream in a read or a FlightError', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 1 }),
        flips,
        fc.option(fc.nat()),
        (which, changes, cut) => {
          const copy = wire.map((m) => m.slice());
          const target = copy[which] ?? new Uint8Array(0);
          for (const [at, xor] of changes) {
            const i = at % target.byteLength;
            target[i] = (target[i] ?? 0) ^ xor;
          }
          if (cut !== null) copy[which] = target.subarray(0, cut % (target.byteLength + 1));
          try {
            readAll(copy);
          } catch (error) {
            if (!(error instanceof FlightError)) throw error;
          }
        },
      ),
      { seed: 20_261_202, numRuns: 2_000 },
    );
  });
});

import { BatchSchema, column } from '@thalweg/stream-arrow';
import { fakeZerobus, jsonRow, zerobus } from '../../src/index.js';

// The table's schema, declared once: it builds the batches and gives the stream its fields.
export const schema = BatchSchema.define({
  fields: [
    { name: 'event', type: column.utf8, nullable: false },
    { name: 'user', type: column.int64, nullable: true },
  ],
  recordId: 'hex', // `_twg_record_id`, hashed by the library exactly as raw hashes it
});

interface Payload {
  readonly type: string;
  readonly userId?: number;
}

export const events = zerobus({
  table: 'main.app.events',
  schema,
  // In production: new SdkTransportFactory({...}) from '@thalweg/sink-zerobus/databricks'.
  transport: fakeZerobus({ ackLatencyMs: 1 }),
  // A payload that is not JSON is quarantined as `decode`; a row missing `event` as `contract`.
  row: jsonRow((value) => {
    const p = value as Payload;
    return { event: p.type, user: p.userId ?? null };
  }),
  streams: 2,
  lane: { maxQueuedBatches: 64 },
});
// Declared under its id: openTopology({ ..., secondaries: { 'zb-events': events } }).

import { expect, it } from 'vitest';
import { derivedCoverage, offsetSpan, sinkId } from '@thalweg/connector-core';
import { BatchBuilder, BatchSchema, column } from '@thalweg/stream-arrow';
import { FakeTransportFactory, ZerobusSink, type StreamField } from '../../src/index.js';

// What the service declares for its Zerobus table…
const fields: StreamField[] = [{ name: 'event', type: 'utf8', nullable: false }];
// …and two batch schemas of its code: the right one, and one with a bug.
const events = new BatchBuilder(
  BatchSchema.define({ fields: [{ name: 'event', type: column.utf8, nullable: false }] }),
);
const ids = new BatchBuilder(
  BatchSchema.define({ fields: [{ name: 'id', type: column.int64, nullable: false }] }),
);

function openSink(factory: FakeTransportFactory) {
  const id = sinkId('events-zerobus');
  const sink = new ZerobusSink<'secondary'>({
    id,
    config: { table: 'main.app.events', streams: 1 },
    fields,
    factory,
    confirm: { apply: async () => undefined }, // the pipeline records coverage here
    log: () => undefined,
  });
  const span = offsetSpan('events', 0, 0, 2);
  return { sink, span, confirm: derivedCoverage(id, span) };
}

it('delivers a batch that matches the declared fields', async () => {
  const factory = new FakeTransportFactory();
  const { sink, span, confirm } = openSink(factory);
  await sink.submit(events.fromRows([{ event: 'signup' }, { event: 'login' }]), span, confirm);
  await sink.flush();
  expect(factory.server.batches).toHaveLength(1);
  await sink.close();
});

it('refuses a batch the real service would refuse, naming the field', async () => {
  const factory = new FakeTransportFactory();
  const { sink, span, confirm } = openSink(factory);
  const wrong = ids.fromRows([{ id: 1n }, { id: 2n }]); // `id: int64`, the table has `event: utf8`
  const refused = sink.submit(wrong, span, confirm);
  // Scope 'batch': in a pipeline the batch is set aside and ingest goes on.
  await expect(refused).rejects.toMatchObject({ code: 'TWG_ZEROBUS_POISON_BATCH' });
  await expect(refused).rejects.toThrow('position 0 is field "id" in the batch, "event"');
  expect(factory.server.batches).toHaveLength(0);
  await sink.close();
});

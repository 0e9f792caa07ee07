import type { FlightBatchOut, FlightServerHandlers } from '../src/flight-server.js';

interface Stored {
  readonly out: FlightBatchOut;
  readonly meta: { topic: string; partition: number; start: number; end: number };
}

/**
 * The Flight store of our conventions in memory, as handlers of our
 * `flightServer` helper: DoPut keeps each batch with its
 * `{"topic","partition","start","end"}` and only then answers `{"seq"}`;
 * DoGet of `{"dataset","topic","partition","from","to"}` streams the kept
 * batches that overlap the window, labelled as stored. The fake the
 * contract suite holds to the same clauses as pyarrow's server.
 */
export function fakeFlightStore(): FlightServerHandlers {
  const datasets = new Map<string, Stored[]>();
  const decode = (bytes: Uint8Array | null): Record<string, unknown> =>
    JSON.parse(new TextDecoder().decode(bytes ?? new Uint8Array())) as Record<string, unknown>;
  return {
    doPut: (put) => {
      const name = put.descriptor.type === 'path' ? (put.descriptor.path[0] ?? '') : '';
      const meta = decode(put.appMetadata) as Stored['meta'] & { seq: number };
      const { topic, partition, start, end } = meta;
      const kept = { topic, partition, start, end };
      const list = datasets.get(name) ?? [];
      list.push({
        out: { batch: put.batch, appMetadata: new TextEncoder().encode(JSON.stringify(kept)) },
        meta: kept,
      });
      datasets.set(name, list);
      return Promise.resolve(new TextEncoder().encode(JSON.stringify({ seq: meta.seq })));
    },
    doGet: (ticket) => {
      const spec = decode(ticket) as {
        dataset?: string;
        topic?: string;
        partition?: number;
        from?: number;
        to?: number;
      };
      const list = datasets.get(spec.dataset ?? '') ?? [];
      const first = list[0];
      if (first === undefined) throw new Error(`no dataset named ${String(spec.dataset)}`);
      const batches = list
        .filter(
          ({ meta }) =>
            (spec.topic === undefined || meta.topic === spec.topic) &&
            (spec.partition === undefined || meta.partition === spec.partition) &&
            (spec.from === undefined || meta.end > spec.from) &&
            (spec.to === undefined || meta.start < spec.to),
        )
        .map((s) => s.out);
      return { schema: first.out.batch.schema, batches };
    },
  };
}

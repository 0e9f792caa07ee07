import { decodeMessageId, DEFAULT_OFFSET_LAYOUT, messageOffset } from '@thalweg/source-pulsar';
import { pulsar } from '@thalweg/test-services';
import { payload } from './harness-topology.js';
import type { HarnessSource, SourcePositions } from './harness-source.js';
import { cursorAcknowledged, parseCursor, type EntryPosition } from './pulsar-cursor.js';
import { producePulsar } from './pulsar-producer.js';
import type { RawContents } from './raw-audit.js';

/** One produced message: where the broker stored it and the offset the source gives it. */
interface Placed {
  readonly at: EntryPosition;
  readonly offset: number;
  /** The produced record's index: its payload is `payload(index, run)`. */
  readonly index: number;
}

interface InternalStats {
  readonly cursors?: Record<
    string,
    { markDeletePosition?: string; individuallyDeletedMessages?: string } | undefined
  >;
}

/**
 * The run's partitioned topic on Pulsar, from the parent's side: created
 * through the admin REST API, produced to each partition's topic through
 * the WebSocket producer with batching off (one message per entry, so an
 * entry is a message), and the subscription's acknowledgements read from
 * each partition's cursor (`internalStats`: the mark-delete position and
 * the individually deleted ranges). A produced message's id carries no
 * partition (it is sent to the partition's own topic) and is compared as
 * (ledger, entry); its offset is `messageOffset` of that id, as the source
 * computes it on delivery.
 */
export class PulsarTopic implements HarnessSource {
  private readonly endpoint = pulsar();
  private readonly placed: Placed[][];
  /** Per partition, the produced record's index by the offset it got. */
  private readonly byOffset: Map<number, number>[];
  produced = 0;

  constructor(
    readonly topic: string,
    readonly partitions: number,
    readonly run: string,
    readonly subscription: string,
  ) {
    this.placed = Array.from({ length: partitions }, () => []);
    this.byOffset = Array.from({ length: partitions }, () => new Map<number, number>());
  }

  private admin(suffix: string): string {
    return `${this.endpoint.adminUrl}/admin/v2/${this.topic.replace('persistent://', 'persistent/')}${suffix}`;
  }

  private async call(method: string, url: string, body?: unknown): Promise<Response> {
    const res = await fetch(url, {
      method,
      headers: { 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    if (res.status >= 300) {
      throw new Error(`${method} ${url}: HTTP ${String(res.status)} ${await res.text()}`);
    }
    return res;
  }

  async create(): Promise<void> {
    await this.call('PUT', this.admin('/partitions'), this.partitions);
    // The subscription exists before the first record, so no child can start after one.
    await this.call('PUT', this.admin(`/subscription/${encodeURIComponent(this.subscription)}`));
  }

  async produce(n: number): Promise<void> {
    const first = this.produced;
    this.produced += n;
    const sends: Promise<void>[] = [];
    for (let p = 0; p < this.partitions; p++) {
      const indices: number[] = [];
      for (let i = first; i < first + n; i++) if (i % this.partitions === p) indices.push(i);
      if (indices.length === 0) continue;
      const payloads = indices.map((i) => payload(i, this.run));
      sends.push(
        producePulsar(this.endpoint.wsUrl, `${this.topic}-partition-${String(p)}`, payloads).then(
          (ids) => {
            ids.forEach((id, k) => {
              const parts = decodeMessageId(id);
              const placed: Placed = {
                at: { ledger: parts.ledgerId, entry: parts.entryId },
                offset: messageOffset(parts, DEFAULT_OFFSET_LAYOUT, id),
                index: indices[k] ?? -1,
              };
              this.placed[p]?.push(placed);
              this.byOffset[p]?.set(placed.offset, placed.index);
            });
          },
        ),
      );
    }
    await Promise.all(sends);
  }

  async positions(): Promise<SourcePositions> {
    const acked: Set<number>[] = [];
    let done = 0;
    for (let p = 0; p < this.partitions; p++) {
      const url = `${this.admin(`-partition-${String(p)}`)}/internalStats`;
      const stats = (await (await this.call('GET', url)).json()) as InternalStats;
      const c = stats.cursors?.[this.subscription];
      const set = new Set<number>();
      acked.push(set);
      if (c === undefined) continue;
      const cursor = parseCursor(
        c.markDeletePosition ?? '-1:-1',
        c.individuallyDeletedMessages ?? '[]',
      );
      for (const m of this.placed[p] ?? []) {
        if (cursorAcknowledged(cursor, m.at)) set.add(m.offset);
      }
      done += set.size;
    }
    return pulsarPositions(this.topic, acked, done);
  }

  offsets(): Promise<number[][]> {
    return Promise.resolve(this.placed.map((ms) => ms.map((m) => m.offset).sort((a, b) => a - b)));
  }

  /** The produced offsets in [start, end): others hold no message, so a claim over them lacks nothing. */
  *offsetsIn(partition: number, start: number, end: number): Iterable<number> {
    for (const m of this.placed[partition] ?? [])
      if (m.offset >= start && m.offset < end) yield m.offset;
  }

  payloadAt(partition: number, offset: number): string | undefined {
    const index = this.byOffset[partition]?.get(offset);
    return index === undefined ? undefined : payload(index, this.run);
  }

  async remove(): Promise<void> {
    await this.call('DELETE', this.admin('/partitions?force=true'));
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

/**
 * The positions of a subscription, from the offsets of the produced
 * messages its cursors acknowledged, per partition: a lead is an
 * acknowledged message raw does not hold.
 */
export function pulsarPositions(
  topic: string,
  acked: readonly ReadonlySet<number>[],
  done: number,
): SourcePositions {
  return {
    acknowledged: (p, o) => acked[p]?.has(o) === true,
    done,
    leads: (raw: RawContents) => {
      const out: string[] = [];
      acked.forEach((set, p) => {
        const lacking = [...set].filter((o) => raw.records[p]?.has(o) !== true);
        if (lacking.length === 0) return;
        out.push(
          `${topic}/${String(p)}: ${String(lacking.length)} acknowledged messages raw lacks, ` +
            `first at offset ${String(lacking.reduce((a, b) => Math.min(a, b)))}`,
        );
      });
      return out;
    },
    summary: `acknowledged [${acked.map((s) => s.size).join(', ')}]`,
  };
}

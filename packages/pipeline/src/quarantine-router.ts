import {
  events,
  NO_HEADERS,
  QuarantineLane,
  type QuarantineLaneConfig,
  type QuarantineLaneStats,
  type QuarantineReason,
  type SourceBatch,
} from '@thalweg/connector-core';
import { recordBytes } from './batch-split.js';
import { withDeadline } from './with-deadline.js';
import type { QuarantinedRecord, QuarantineNote, QuarantineWriter } from './topology.js';

export interface QuarantineStats {
  readonly byReason: Readonly<Partial<Record<QuarantineReason, number>>>;
  readonly written: number;
  readonly writeFailures: number;
  /** Taken off the lane with no writer configured, or left at shutdown: raw still holds them. */
  readonly discarded: number;
  readonly lane: QuarantineLaneStats;
}

/**
 * Where refused records go: the bounded quarantine lane (an offer never
 * waits; a full lane sheds and counts), and the user's writer pumping from
 * it. With no writer, entries are taken off and counted as discarded — raw
 * still holds every one of them, and recovery's `rehydrate` derives them again.
 */
export class QuarantineRouter {
  private readonly lane: QuarantineLane<QuarantinedRecord>;
  private readonly counts: Partial<Record<QuarantineReason, number>> = {};
  /** Not the pipeline's abort: the secondaries still quarantine while they drain. */
  private readonly stopPump = new AbortController();
  private pump: Promise<void> | null = null;
  private written = 0;
  private writeFailures = 0;
  private discarded = 0;

  constructor(
    config: QuarantineLaneConfig,
    private readonly writer: QuarantineWriter | undefined,
    private readonly log: (line: string) => void,
  ) {
    this.lane = new QuarantineLane(config);
  }

  offer(sink: string, batch: SourceBatch, note: QuarantineNote): void {
    this.counts[note.reason] = (this.counts[note.reason] ?? 0) + 1;
    if (events.quarantined.active) {
      const { topic, partition } = batch.span;
      events.quarantined.publish({
        sink,
        reason: note.reason,
        topic,
        partition,
        offset: note.offset,
      });
    }
    const record = batch.records.find((r) => r.offset === note.offset);
    this.lane.offer({
      reason: note.reason,
      bytes: record === undefined ? 64 : recordBytes(record),
      detail: note.detail,
      record: {
        topic: batch.span.topic,
        partition: batch.span.partition,
        offset: note.offset,
        sink,
        key: record?.key ?? null,
        value: record?.value ?? new Uint8Array(0),
        headers: record?.headers ?? NO_HEADERS,
        tombstone: record?.tombstone === true,
      },
    });
  }

  start(): void {
    if (this.writer !== undefined) this.pump = this.run(this.writer);
  }

  /** With no writer, what the lane holds is counted and let go (each flow-control cycle). */
  dropUnwritten(): void {
    if (this.writer === undefined) this.discarded += this.lane.drain().length;
  }

  /** Lets the writer finish within `deadlineMs`; what it did not take is counted, not lost silently. */
  async stop(deadlineMs: number): Promise<void> {
    this.stopPump.abort();
    if (this.pump !== null && !(await withDeadline(this.pump, deadlineMs))) {
      this.log('quarantine writer did not finish; the rest is discarded');
    }
    this.discarded += this.lane.drain().length;
  }

  laneStats(): QuarantineLaneStats {
    return this.lane.stats();
  }

  stats(): QuarantineStats {
    return {
      byReason: { ...this.counts },
      written: this.written,
      writeFailures: this.writeFailures,
      discarded: this.discarded,
      lane: this.lane.stats(),
    };
  }

  private async run(writer: QuarantineWriter): Promise<void> {
    // `take` hands out held entries before it looks at the signal, so the
    // pump writes everything queued before it stops.
    for (;;) {
      let entry;
      try {
        entry = await this.lane.take(this.stopPump.signal);
      } catch {
        return;
      }
      try {
        await writer(entry);
        this.written += 1;
      } catch (error) {
        this.writeFailures += 1;
        this.log(
          `quarantine write failed for ${entry.record.topic}/${entry.record.partition}@${entry.record.offset} ` +
            `(raw still holds it): ${error instanceof Error ? error.message : String(error)}`,
        );
      }
    }
  }
}

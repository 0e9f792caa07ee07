import type { Cancel, Scheduler, SourcePartition } from '@thalweg/connector-core';
import { partitionsOf } from './partition-topic.js';
import type { PulsarPort } from './pulsar-port.js';

/** A partition found, and whether its topic is partitioned (its session is then on `-partition-N`). */
export interface FoundPartition {
  readonly partition: SourcePartition;
  readonly partitioned: boolean;
}

/**
 * The partitions of the source's topics: listed once at the start, then
 * every `pollMs` (0: never), so partitions added while running are read
 * too. A partition count never shrinks on Pulsar; a smaller count read
 * back is ignored. A failed poll is reported and tried again at the next.
 */
export class PartitionDiscovery {
  private readonly counts = new Map<string, number>();
  private cancel: Cancel | undefined;
  private polling = false;

  constructor(
    private readonly port: PulsarPort,
    private readonly topics: readonly string[],
    private readonly found: (found: FoundPartition) => void,
  ) {}

  /** Lists every topic's partitions; rejects with the port's error (an unknown topic). */
  async start(): Promise<void> {
    for (const topic of this.topics) await this.list(topic);
  }

  poll(scheduler: Scheduler, pollMs: number, failed: (error: unknown) => void): void {
    if (pollMs <= 0 || this.cancel !== undefined) return;
    this.cancel = scheduler.every(pollMs, async () => {
      if (this.polling) return;
      this.polling = true;
      try {
        for (const topic of this.topics) await this.list(topic);
      } catch (error) {
        failed(error);
      } finally {
        this.polling = false;
      }
    });
  }

  stop(): void {
    this.cancel?.();
    this.cancel = undefined;
  }

  /** Every partition known so far. */
  count(): number {
    let n = 0;
    for (const c of this.counts.values()) n += Math.max(1, c);
    return n;
  }

  private async list(topic: string): Promise<void> {
    const count = await this.port.partitions(topic);
    const before = this.counts.get(topic);
    if (before !== undefined && count <= before) return;
    this.counts.set(topic, count);
    const known = before === undefined ? 0 : Math.max(1, before);
    for (const partition of partitionsOf(topic, count).slice(known)) {
      this.found({ partition, partitioned: count > 0 });
    }
  }
}

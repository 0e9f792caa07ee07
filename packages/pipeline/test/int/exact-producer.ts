import type { SourceHeader } from '@thalweg/connector-core';
import type { Message, Producer } from 'kafkajs';

/** A record to produce exactly: null key, null value (a tombstone) and any header list. */
export interface ExactRecord {
  readonly partition: number;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly timestamp: number;
  readonly headers: readonly SourceHeader[];
}

/**
 * kafkajs's producer takes headers as an object, so it cannot send a list in
 * which a name repeats after another name, nor integer-like names in their
 * own order. Its record encoder turns each key into headers with
 * `Array.isArray(v) ? v.map((x) => ({ key, value: x })) : ...`; a value that
 * is an array whose `map` yields the whole list as `{ key, value }` pairs
 * makes it write exactly that list (its size is computed from the same
 * list, so the record stays well formed). Test-only: what the consumer
 * reads back is compared with the list meant, so a kafkajs that stopped
 * honouring this would fail the test, not pass it.
 */
class HeaderList extends Array<unknown> {
  constructor(private readonly pairs: readonly SourceHeader[]) {
    super();
  }

  override map<U>(): U[] {
    return this.pairs.map(([key, value]) => ({
      key,
      value: value === null ? null : Buffer.from(value),
    })) as U[];
  }
}

function message(r: ExactRecord): Message {
  const headers = r.headers.length === 0 ? {} : { list: new HeaderList(r.headers) };
  return {
    partition: r.partition,
    key: r.key,
    value: r.value,
    timestamp: String(r.timestamp),
    headers: headers as unknown as NonNullable<Message['headers']>,
  };
}

/** Produces each record on its own (a batch of large records would exceed the broker's limit), in order. */
export async function produceExact(
  producer: Producer,
  topic: string,
  records: readonly ExactRecord[],
): Promise<void> {
  for (const r of records) {
    await producer.send({ topic, acks: -1, messages: [message(r)] });
  }
}

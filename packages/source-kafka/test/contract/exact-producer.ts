import type { SourceHeader } from '@thalweg/connector-core';
import type { Message, Producer } from 'kafkajs';
import type { WrittenRecord } from '@thalweg/contracts';

/**
 * kafkajs's producer takes headers as an object, which cannot hold a name
 * that repeats after another one, nor integer-like names in their own
 * order. Its record encoder writes `value.map(...)` of an array value as
 * that key's headers; an array whose `map` yields the whole list writes
 * exactly the list (the trick of pipeline/test/int/exact-producer.ts).
 * Test-only: the contract compares what the source reads back with the
 * list meant, so a kafkajs that stopped honouring it fails, never passes.
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

function message(partition: number, r: WrittenRecord): Message {
  const headers = r.headers.length === 0 ? {} : { list: new HeaderList(r.headers) };
  return {
    partition,
    key: r.key === null ? null : Buffer.from(r.key),
    // A tombstone is a record with no value at all.
    value: r.tombstone === true ? null : Buffer.from(r.value),
    headers: headers as unknown as NonNullable<Message['headers']>,
  };
}

/** Produces each record on its own, in order, acknowledged by every replica. */
export async function produceExact(
  producer: Producer,
  topic: string,
  partition: number,
  records: readonly WrittenRecord[],
): Promise<void> {
  for (const r of records) {
    await producer.send({ topic, acks: -1, messages: [message(partition, r)] });
  }
}

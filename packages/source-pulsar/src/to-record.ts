import {
  NO_HEADERS,
  type SourceHeader,
  type SourcePartition,
  type SourceRecord,
} from '@thalweg/connector-core';
import { PulsarSourceError } from './errors.js';
import { decodeMessageId, messageOffset, type OffsetLayout } from './message-id.js';
import type { PulsarMessage } from './pulsar-port.js';

/** The header raw keeps a message's event time in, as decimal milliseconds (when the producer set one). */
export const EVENT_TIME_HEADER = 'pulsar.event_time';
/** The header raw keeps a message's publish time in, as decimal milliseconds. */
export const PUBLISH_TIME_HEADER = 'pulsar.publish_time';

const encoder = new TextEncoder();

/** A message as the source holds it until it is yielded: its record, its id, its size. */
export interface HeldMessage {
  readonly offset: number;
  readonly messageId: string;
  readonly record: SourceRecord;
  /** Key, value and header bytes, for the queue bound. */
  readonly bytes: number;
}

/**
 * One message as a SourceRecord (ADR 0032): the offset packed from its id;
 * the key as its UTF-8 bytes (null when it has none); the payload as is;
 * the properties as headers in order, then `pulsar.event_time` (when set)
 * and `pulsar.publish_time`; the timestamp the event time, else the publish
 * time. Never a tombstone: Pulsar has no delete marker.
 *
 * An id that does not decode or does not fit the layout throws its coded
 * error with the topic and partition in front.
 */
export function toHeldMessage(
  m: PulsarMessage,
  partition: SourcePartition,
  layout: OffsetLayout,
): HeldMessage {
  let offset: number;
  try {
    offset = messageOffset(decodeMessageId(m.messageId), layout, m.messageId);
  } catch (error) {
    if (error instanceof PulsarSourceError) {
      throw new PulsarSourceError(
        error.code,
        `${partition.topic} partition ${String(partition.partition)}: ${error.message}`,
        { partition, cause: error },
      );
    }
    throw error;
  }
  const key = m.key === null ? null : encoder.encode(m.key);
  const headers: SourceHeader[] = [];
  let bytes = (key?.byteLength ?? 0) + m.payload.byteLength;
  const add = (name: string, value: string): void => {
    const v = encoder.encode(value);
    headers.push([name, v]);
    bytes += name.length + v.byteLength;
  };
  for (const [name, value] of m.properties) add(name, value);
  if (m.eventTime !== null) add(EVENT_TIME_HEADER, String(m.eventTime));
  add(PUBLISH_TIME_HEADER, String(m.publishTime));
  const record: SourceRecord = {
    offset,
    key,
    value: m.payload,
    timestamp: m.eventTime ?? m.publishTime,
    headers: headers.length === 0 ? NO_HEADERS : headers,
  };
  return { offset, messageId: m.messageId, record, bytes };
}

import { isObject, parseOrdered, type Json } from './ordered-json.js';
import type { PulsarMessage } from './pulsar-port.js';

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** A frame from the broker that is not a message this package can hand on. */
export class MalformedFrame extends Error {}

/** What a consumer or reader socket sent: a message, or another frame (e.g. an answer to `isEndOfTopic`). */
export type IncomingFrame =
  | { readonly kind: 'message'; readonly message: PulsarMessage }
  | { readonly kind: 'other'; readonly text: string };

function time(field: string, v: unknown): number {
  if (typeof v !== 'string') throw new MalformedFrame(`${field} is not an ISO time string`);
  const ms = Date.parse(v);
  if (!Number.isFinite(ms)) throw new MalformedFrame(`${field} ${JSON.stringify(v)} is not a time`);
  return ms;
}

/** A property name V8 orders ahead of the others in a parsed object: a canonical array index. */
const INDEX_NAME = /^(?:0|[1-9]\d{0,9})$/;

function hasIndexName(names: readonly string[]): boolean {
  return names.some((n) => INDEX_NAME.test(n) && Number(n) < 4_294_967_295);
}

/** The properties member of `text` with its names in text order (the slow path, see parseOrdered). */
function orderedProperties(text: string): [string, Json][] {
  const root = parseOrdered(text);
  const properties = isObject(root) ? root.members.find(([n]) => n === 'properties') : undefined;
  return properties !== undefined && isObject(properties[1]) ? properties[1].members : [];
}

/**
 * Maps one text frame of a WebSocket consumer or reader to a message:
 * payload base64 to bytes, properties to pairs in the order sent,
 * `publishTime`/`eventTime` ISO strings to milliseconds (no eventTime, or
 * the epoch, is none), no key to null ('' stays ''). A frame without a
 * `messageId` is `other`; a message frame with a field of the wrong shape
 * throws MalformedFrame naming the field. `JSON.parse` reads the frame;
 * only properties with integer-like names are read again in text order.
 */
export function parseFrame(text: string): IncomingFrame {
  let root: unknown;
  try {
    root = JSON.parse(text);
  } catch {
    try {
      parseOrdered(text);
    } catch (cause) {
      throw new MalformedFrame(`not JSON: ${(cause as Error).message}`);
    }
    throw new MalformedFrame('not JSON');
  }
  if (typeof root !== 'object' || root === null || Array.isArray(root)) {
    throw new MalformedFrame('not a JSON object');
  }
  const field = root as Readonly<Record<string, unknown>>;
  if (!('messageId' in field)) return { kind: 'other', text };
  const messageId = field['messageId'];
  if (typeof messageId !== 'string' || messageId === '' || !BASE64.test(messageId)) {
    throw new MalformedFrame('messageId is not a base64 string');
  }
  const payload = field['payload'];
  const bytes = typeof payload === 'string' ? fromBase64(payload) : null;
  if (bytes === null) throw new MalformedFrame(`payload of ${messageId} is not a base64 string`);
  const key = field['key'];
  if (key !== undefined && typeof key !== 'string') {
    throw new MalformedFrame(`key of ${messageId} is not a string`);
  }
  const properties = readProperties(messageId, field['properties'], text);
  const eventTime = field['eventTime'];
  const eventMs = eventTime === undefined || eventTime === null ? 0 : time('eventTime', eventTime);
  const redelivery = field['redeliveryCount'] ?? 0;
  if (typeof redelivery !== 'number' || !Number.isInteger(redelivery) || redelivery < 0) {
    throw new MalformedFrame(`redeliveryCount of ${messageId} is not a count`);
  }
  return {
    kind: 'message',
    message: {
      messageId,
      payload: bytes,
      key: key ?? null,
      properties,
      publishTime: time('publishTime', field['publishTime']),
      eventTime: eventMs === 0 ? null : eventMs,
      redeliveryCount: redelivery,
    },
  };
}

function readProperties(
  messageId: string,
  raw: unknown,
  text: string,
): (readonly [string, string])[] {
  if (raw === undefined || raw === null) return [];
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    throw new MalformedFrame(`properties of ${messageId} is not an object`);
  }
  const names = Object.keys(raw);
  const pairs: [string, unknown][] = hasIndexName(names)
    ? orderedProperties(text)
    : names.map((n) => [n, (raw as Record<string, unknown>)[n]]);
  const properties: (readonly [string, string])[] = [];
  for (const [name, value] of pairs) {
    if (typeof value !== 'string') {
      throw new MalformedFrame(`property ${JSON.stringify(name)} of ${messageId} is not a string`);
    }
    properties.push([name, value]);
  }
  return properties;
}

/**
 * Decodes standard base64, or null when `text` is not that. Node's decoder
 * skips what it cannot read, so a decoded length short of what the text's
 * length promises is a character that is not base64 (checked in one pass,
 * without a regular expression over every payload).
 */
function fromBase64(text: string): Uint8Array | null {
  if (text.length % 4 !== 0) return null;
  const padding = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  const bytes = Buffer.from(text, 'base64');
  if (bytes.length !== (text.length / 4) * 3 - padding) return null;
  if (text.includes('-') || text.includes('_')) return null;
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length);
}

/** The frame that acknowledges one message (a consumer), or hands back a flow token (a reader). */
export function ackFrame(messageId: string): string {
  return JSON.stringify({ messageId });
}

export function nackFrame(messageId: string): string {
  return JSON.stringify({ type: 'negativeAcknowledge', messageId });
}

export function permitFrame(n: number): string {
  return JSON.stringify({ type: 'permit', permitMessages: n });
}

import type { PulsarMessage } from './pulsar-port.js';

/** A JSON value whose objects keep their members in the order of the text. */
type Json = null | boolean | number | string | Json[] | { readonly members: [string, Json][] };

/**
 * Parses JSON keeping each object's members in text order. `JSON.parse`
 * moves integer-like names ("7", "42") ahead of the others, and Pulsar
 * property names may be anything, so the frame is parsed here.
 */
function parseOrdered(text: string): Json {
  let at = 0;
  const fail = (what: string): never => {
    throw new Error(`${what} at character ${String(at)}`);
  };
  const space = (): void => {
    while (at < text.length && ' \t\r\n'.includes(text.charAt(at))) at++;
  };
  const string = (): string => {
    const start = at;
    at++;
    while (at < text.length && text.charAt(at) !== '"') at += text.charAt(at) === '\\' ? 2 : 1;
    if (at >= text.length) fail('unterminated string');
    at++;
    return JSON.parse(text.slice(start, at)) as string;
  };
  const value = (): Json => {
    space();
    const c = text.charAt(at);
    if (c === '"') return string();
    if (c === '{') {
      at++;
      const members: [string, Json][] = [];
      space();
      if (text.charAt(at) === '}') {
        at++;
        return { members };
      }
      for (;;) {
        space();
        if (text.charAt(at) !== '"') fail('expected a member name');
        const name = string();
        space();
        if (text.charAt(at) !== ':') fail("expected ':'");
        at++;
        members.push([name, value()]);
        space();
        const next = text.charAt(at++);
        if (next === '}') return { members };
        if (next !== ',') fail("expected ',' or '}'");
      }
    }
    if (c === '[') {
      at++;
      const items: Json[] = [];
      space();
      if (text.charAt(at) === ']') {
        at++;
        return items;
      }
      for (;;) {
        items.push(value());
        space();
        const next = text.charAt(at++);
        if (next === ']') return items;
        if (next !== ',') fail("expected ',' or ']'");
      }
    }
    const literal = /^(?:true|false|null|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?)/.exec(
      text.slice(at),
    );
    if (literal === null) return fail('unexpected character');
    at += literal[0].length;
    return JSON.parse(literal[0]) as Json;
  };
  const result = value();
  space();
  if (at !== text.length) fail('trailing characters');
  return result;
}

function isObject(v: Json | undefined): v is { readonly members: [string, Json][] } {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** A frame from the broker that is not a message this package can hand on. */
export class MalformedFrame extends Error {}

/** What a consumer or reader socket sent: a message, or another frame (e.g. an answer to `isEndOfTopic`). */
export type IncomingFrame =
  | { readonly kind: 'message'; readonly message: PulsarMessage }
  | { readonly kind: 'other'; readonly text: string };

function time(field: string, v: Json | undefined): number {
  if (typeof v !== 'string') throw new MalformedFrame(`${field} is not an ISO time string`);
  const ms = Date.parse(v);
  if (!Number.isFinite(ms)) throw new MalformedFrame(`${field} ${JSON.stringify(v)} is not a time`);
  return ms;
}

/**
 * Maps one text frame of a WebSocket consumer or reader to a message:
 * payload base64 to bytes, properties to pairs in the order sent,
 * `publishTime`/`eventTime` ISO strings to milliseconds (no eventTime, or
 * the epoch, is none), no key to null ('' stays ''). A frame without a
 * `messageId` is `other`; a message frame with a field of the wrong shape
 * throws MalformedFrame naming the field.
 */
export function parseFrame(text: string): IncomingFrame {
  let root: Json;
  try {
    root = parseOrdered(text);
  } catch (cause) {
    throw new MalformedFrame(`not JSON: ${(cause as Error).message}`);
  }
  if (!isObject(root)) throw new MalformedFrame('not a JSON object');
  const field = new Map(root.members);
  if (!field.has('messageId')) return { kind: 'other', text };
  const messageId = field.get('messageId');
  if (typeof messageId !== 'string' || messageId === '' || !BASE64.test(messageId)) {
    throw new MalformedFrame('messageId is not a base64 string');
  }
  const payload = field.get('payload');
  if (typeof payload !== 'string' || !BASE64.test(payload)) {
    throw new MalformedFrame(`payload of ${messageId} is not a base64 string`);
  }
  const bytes = Buffer.from(payload, 'base64');
  const key = field.get('key');
  if (key !== undefined && typeof key !== 'string') {
    throw new MalformedFrame(`key of ${messageId} is not a string`);
  }
  const rawProperties = field.get('properties');
  const properties: (readonly [string, string])[] = [];
  if (rawProperties !== undefined && rawProperties !== null) {
    if (!isObject(rawProperties)) {
      throw new MalformedFrame(`properties of ${messageId} is not an object`);
    }
    for (const [name, value] of rawProperties.members) {
      if (typeof value !== 'string') {
        throw new MalformedFrame(
          `property ${JSON.stringify(name)} of ${messageId} is not a string`,
        );
      }
      properties.push([name, value]);
    }
  }
  const eventTime = field.get('eventTime');
  const eventMs = eventTime === undefined || eventTime === null ? 0 : time('eventTime', eventTime);
  const redelivery = field.get('redeliveryCount') ?? 0;
  if (typeof redelivery !== 'number' || !Number.isInteger(redelivery) || redelivery < 0) {
    throw new MalformedFrame(`redeliveryCount of ${messageId} is not a count`);
  }
  return {
    kind: 'message',
    message: {
      messageId,
      payload: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length),
      key: key ?? null,
      properties,
      publishTime: time('publishTime', field.get('publishTime')),
      eventTime: eventMs === 0 ? null : eventMs,
      redeliveryCount: redelivery,
    },
  };
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

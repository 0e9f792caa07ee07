import type {
  ConsumerSession,
  PulsarMessage,
  PulsarPort,
  ReaderSession,
  ReadSettings,
  SessionEvents,
  SubscribeSettings,
} from '../../src/index.js';

/** Protobuf MessageIdData, written field by field (1 ledger, 2 entry, 3 partition, 4 batch index). */
export function encodeMessageId(
  ledger: number,
  entry: number,
  batchIndex = -1,
  partition = -1,
): string {
  const out: number[] = [];
  const varint = (v: bigint): void => {
    let x = BigInt.asUintN(64, v);
    do {
      const b = Number(x & 0x7fn);
      x >>= 7n;
      out.push(x === 0n ? b : b | 0x80);
    } while (x !== 0n);
  };
  const field = (n: number, v: number) => {
    varint(BigInt(n << 3));
    varint(BigInt(v));
  };
  field(1, ledger);
  field(2, entry);
  if (partition >= 0) field(3, partition);
  if (batchIndex >= 0) field(4, batchIndex);
  return Buffer.from(out).toString('base64');
}

export interface Published {
  readonly payload?: Uint8Array;
  readonly key?: string | null;
  readonly properties?: readonly (readonly [string, string])[];
  readonly publishTime?: number;
  readonly eventTime?: number | null;
  /** The id's place; default ledger 1, the next entry, no batch index. */
  readonly ledger?: number;
  readonly entry?: number;
  readonly batchIndex?: number;
}

interface Log {
  readonly messages: PulsarMessage[];
  nextEntry: number;
}

/** One socket's record: what it was granted, delivered, acknowledged. */
export class FakeSession implements ConsumerSession, ReaderSession {
  readonly permits: number[] = [];
  readonly acks: string[] = [];
  readonly nacks: string[] = [];
  readonly releases: string[] = [];
  readonly delivered: string[] = [];
  /** Permits not used yet (consumers) or tokens free (readers). */
  credit: number;
  open = true;
  /** Reader: where in the log the next message is. */
  cursor = 0;

  constructor(
    readonly broker: FakePulsarBroker,
    readonly kind: 'consumer' | 'reader',
    readonly topic: string,
    readonly events: SessionEvents,
    readonly subscription: string | null,
    credit: number,
  ) {
    this.credit = credit;
  }

  /** A method, not the field: a message handler may close the session mid-dispatch. */
  isOpen(): boolean {
    return this.open;
  }

  permit(n: number): void {
    if (!this.open) throw new Error('permit on a closed session');
    this.permits.push(n);
    this.credit += n;
    this.broker.dispatchSoon();
  }

  ack(messageId: string): void {
    if (!this.open) throw new Error('ack on a closed session');
    this.acks.push(messageId);
    this.broker.acked(this, messageId);
  }

  nack(messageId: string): void {
    this.nacks.push(messageId);
    this.broker.redeliver(this, messageId);
  }

  release(messageId: string): void {
    if (!this.open) throw new Error('release on a closed session');
    this.releases.push(messageId);
    this.credit += 1;
    this.broker.dispatchSoon();
  }

  /** The broker closes the socket: `closed` fires, and what was not acknowledged is free again. */
  kill(code = 1006, detail = 'killed by the test'): void {
    if (!this.open) return;
    this.open = false;
    this.broker.ended(this);
    this.events.closed({ code, detail });
  }

  close(): Promise<void> {
    this.kill(1000, 'closed by the client');
    return Promise.resolve();
  }
}

/**
 * A broker in memory: topics with a scripted backlog, subscriptions that
 * dispatch each message to one consumer at a time (permits honoured
 * exactly, in log order, what is not acknowledged free again when its
 * consumer goes), readers that start after an id, and partition counts that
 * grow. Messages go out asynchronously (after a macrotask), as from a socket.
 */
export class FakePulsarBroker {
  readonly logs = new Map<string, Log>();
  readonly partitionCounts = new Map<string, number>();
  readonly sessions: FakeSession[] = [];
  /** Per `topic\0subscription`: acknowledged ids, and ids out with a live consumer. */
  private readonly acks = new Map<string, Set<string>>();
  private readonly out = new Map<string, Map<string, FakeSession>>();
  private scheduled = false;
  subscribeFailures: Error[] = [];

  /** A topic with `partitions` partitions (0: not partitioned). */
  topic(name: string, partitions: number): this {
    this.partitionCounts.set(name, partitions);
    const names =
      partitions === 0
        ? [name]
        : Array.from({ length: partitions }, (_, i) => `${name}-partition-${String(i)}`);
    for (const n of names) if (!this.logs.has(n)) this.logs.set(n, { messages: [], nextEntry: 0 });
    return this;
  }

  grow(name: string, partitions: number): void {
    this.topic(name, partitions);
  }

  publish(topic: string, m: Published = {}): string {
    const log = this.logs.get(topic);
    if (log === undefined) throw new Error(`no topic ${topic}`);
    const entry = m.entry ?? log.nextEntry++;
    const id = encodeMessageId(m.ledger ?? 1, entry, m.batchIndex ?? -1);
    log.messages.push({
      messageId: id,
      payload: m.payload ?? new TextEncoder().encode(`m${String(log.messages.length)}`),
      key: m.key ?? null,
      properties: m.properties ?? [],
      publishTime: m.publishTime ?? 1_000 + log.messages.length,
      eventTime: m.eventTime ?? null,
      redeliveryCount: 0,
    });
    this.dispatchSoon();
    return id;
  }

  ids(topic: string): string[] {
    return (this.logs.get(topic)?.messages ?? []).map((m) => m.messageId);
  }

  port(): FakePulsarPort {
    return new FakePulsarPort(this);
  }

  consumers(topic: string): FakeSession[] {
    return this.sessions.filter((s) => s.kind === 'consumer' && s.topic === topic);
  }

  live(topic: string): FakeSession {
    const s = this.sessions.filter((x) => x.topic === topic && x.open).at(-1);
    if (s === undefined) throw new Error(`no live session on ${topic}`);
    return s;
  }

  /** Every acknowledgement on a subscription, by any session. */
  ackedOn(topic: string, subscription: string): ReadonlySet<string> {
    return this.acks.get(`${topic}\u0000${subscription}`) ?? new Set();
  }

  open(session: FakeSession): void {
    this.sessions.push(session);
    this.dispatchSoon();
  }

  acked(session: FakeSession, id: string): void {
    const key = `${session.topic}\u0000${session.subscription ?? ''}`;
    let set = this.acks.get(key);
    if (set === undefined) {
      set = new Set();
      this.acks.set(key, set);
    }
    set.add(id);
    this.out.get(key)?.delete(id);
  }

  /** A message out with `session` is free again and goes to the next consumer with a permit. */
  redeliver(session: FakeSession, id: string): void {
    this.out.get(`${session.topic}\u0000${session.subscription ?? ''}`)?.delete(id);
    this.dispatchSoon();
  }

  ended(session: FakeSession): void {
    const out = this.out.get(`${session.topic}\u0000${session.subscription ?? ''}`);
    if (out !== undefined) for (const [id, s] of [...out]) if (s === session) out.delete(id);
    this.dispatchSoon();
  }

  dispatchSoon(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.dispatch();
    });
  }

  private dispatch(): void {
    for (const s of this.sessions) {
      if (!s.open) continue;
      const log = this.logs.get(s.topic);
      if (log === undefined) continue;
      if (s.kind === 'reader') {
        while (s.isOpen() && s.credit > 0 && s.cursor < log.messages.length) {
          const m = log.messages[s.cursor++];
          if (m === undefined) break;
          s.credit -= 1;
          s.delivered.push(m.messageId);
          s.events.message(m);
        }
        continue;
      }
      const key = `${s.topic}\u0000${s.subscription ?? ''}`;
      const acked = this.acks.get(key) ?? new Set<string>();
      let out = this.out.get(key);
      if (out === undefined) {
        out = new Map();
        this.out.set(key, out);
      }
      for (const m of log.messages) {
        if (!s.isOpen() || s.credit <= 0) break;
        if (acked.has(m.messageId) || out.has(m.messageId)) continue;
        out.set(m.messageId, s);
        s.credit -= 1;
        s.delivered.push(m.messageId);
        s.events.message(m);
      }
    }
  }
}

export class FakePulsarPort implements PulsarPort {
  closed = false;

  constructor(readonly broker: FakePulsarBroker) {}

  partitions(topic: string): Promise<number> {
    const n = this.broker.partitionCounts.get(topic);
    if (n === undefined) return Promise.reject(new Error(`no topic ${topic}`));
    return Promise.resolve(n);
  }

  subscribe(settings: SubscribeSettings, events: SessionEvents): Promise<FakeSession> {
    const failure = this.broker.subscribeFailures.shift();
    if (failure !== undefined) return Promise.reject(failure);
    const s = new FakeSession(
      this.broker,
      'consumer',
      settings.topic,
      events,
      settings.subscription,
      0,
    );
    this.broker.open(s);
    return Promise.resolve(s);
  }

  read(settings: ReadSettings, events: SessionEvents): Promise<FakeSession> {
    const s = new FakeSession(
      this.broker,
      'reader',
      settings.topic,
      events,
      null,
      settings.receiverQueueSize,
    );
    const ids = this.broker.ids(settings.topic);
    if (settings.start.kind === 'after') {
      const at = ids.indexOf(settings.start.messageId);
      if (at < 0) return Promise.reject(new Error(`no message ${settings.start.messageId}`));
      s.cursor = at + 1;
    } else if (settings.start.kind === 'latest') {
      s.cursor = ids.length;
    }
    this.broker.open(s);
    return Promise.resolve(s);
  }

  close(): Promise<void> {
    this.closed = true;
    return Promise.resolve();
  }
}

/** Waits until `cond` holds, letting the fake broker's macrotasks run; fails after `rounds`. */
export async function until(cond: () => boolean, what: string, rounds = 2_000): Promise<void> {
  for (let i = 0; i < rounds; i++) {
    if (cond()) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error(`timed out waiting for ${what}`);
}

import { FileServerLog, type FakeServerLog } from './fake-server-log.js';
import { ZerobusSinkError, type ZerobusFailure } from './errors.js';
import { checkStreamBatch } from './stream-batch-check.js';
import { checkStreamFields } from './stream-fields.js';
import type { StreamSpec, TransportFactory, ZerobusTransport } from './transport.js';

/** One injected failure: the `nth` call (1-based) of `op` on one stream fails as `failure`. */
export interface Fault {
  readonly op: 'submit' | 'wait';
  readonly nth: number;
  readonly failure: ZerobusFailure;
}

export interface FakeTransportOptions {
  /**
   * Time from a batch leaving the wire to its durable acknowledgement, or
   * 'manual': nothing is acknowledged until `acknowledgeUpTo` is called
   * (deterministic tests).
   */
  readonly ackLatencyMs?: number | 'manual';
  /** Wire bandwidth in bytes per second; batches transmit one after another. Infinity: no cap. */
  readonly bandwidthBytesPerSec?: number;
  /** Submits wait while this many batches are unacknowledged (the SDK's maxInflightBatches). */
  readonly maxInflight?: number;
  /** The real binding holds a per-stream lock while waiting: submits stall until the wait ends. */
  readonly waitBlocksSubmit?: boolean;
  readonly faults?: readonly Fault[];
}

export interface FakeServerOptions {
  /**
   * Every acknowledged batch is first appended to a file in this directory
   * and fsync'd, so an acknowledgement means durable across a process kill
   * (read the batches back with `readFakeServerBatches`).
   */
  readonly persistDir?: string;
  /** Replaces the file log under `persistDir` (tests). */
  readonly log?: FakeServerLog;
  /**
   * Whether acknowledged payloads are kept in `batches` (the default) for a
   * test to read back. A long run (a benchmark) sets false: the server then
   * only counts them, as a real table holds its rows on the server's disk,
   * not in this process.
   */
  readonly retain?: boolean;
}

/** What the fake server durably holds, shared by every stream of a factory. */
export class FakeZerobusServer {
  /** Every acknowledged batch payload, in acknowledgement order per stream (none when `retain` is false). */
  readonly batches: Uint8Array[] = [];
  /** How many batches were acknowledged, kept or not. */
  acknowledged = 0;
  readonly retains: boolean;
  /** Payloads received but never acknowledged when their stream died: they may be on the server too. */
  readonly unacknowledgedAtDeath: Uint8Array[] = [];
  private readonly log: FakeServerLog | null;
  /** Appends run one after another, so a file never interleaves two of them. */
  private appending: Promise<void> = Promise.resolve();

  constructor(options: FakeServerOptions = {}) {
    this.retains = options.retain ?? true;
    this.log =
      options.log ??
      (options.persistDir === undefined ? null : new FileServerLog(options.persistDir));
  }

  /** A server that persists every batch in `dir` before acknowledging it. */
  static durable(dir: string): FakeZerobusServer {
    return new FakeZerobusServer({ persistDir: dir });
  }

  get isDurable(): boolean {
    return this.log !== null;
  }

  /** Resolves once `payloads` are durable (at once for an in-memory server). */
  persist(payloads: readonly Uint8Array[]): Promise<void> {
    const log = this.log;
    if (log === null) return Promise.resolve();
    const done = this.appending.then(() => log.append(payloads));
    this.appending = done.catch(() => undefined);
    return done;
  }

  /** Waits for the appends under way and releases the file. */
  async close(): Promise<void> {
    await this.appending;
    await this.log?.close();
  }
}

/**
 * A ZerobusTransport with the real SDK's semantics and no network: offsets
 * 0, 1, 2, … per stream; the binding's contract for each batch (one
 * non-empty record batch per IPC message, its schema exactly the stream's
 * declared fields: anything else is refused as `poison-batch` naming the
 * field, see checkStreamBatch); cumulative acknowledgement; a cap on in-flight
 * batches that blocks `submit`; a wire of finite bandwidth; acknowledgement
 * latency; and failures of every class injected at chosen calls. A
 * poison-stream failure kills the stream: every later call fails the same
 * way, as the real stream does after a terminal error.
 *
 * This is the transport to unit-test a pipeline against; it is part of the
 * public API and keeps these semantics stable.
 */
export class FakeZerobusTransport implements ZerobusTransport {
  private nextOffset = 0;
  private ackedUpTo = -1;
  /** The highest offset handed to the server to persist (equal to ackedUpTo in memory). */
  private persistingUpTo = -1;
  private wireFreeAt = 0;
  private dead: ZerobusSinkError | null = null;
  private closed = false;
  private submits = 0;
  private waits = 0;
  private readonly unacked = new Map<number, Uint8Array>();
  private readonly ackWaiters: {
    offset: number;
    resolve: () => void;
    reject: (e: unknown) => void;
  }[] = [];
  private readonly timers = new Set<NodeJS.Timeout>();
  private lockFree: Promise<void> = Promise.resolve();

  constructor(
    readonly spec: StreamSpec,
    private readonly options: FakeTransportOptions = {},
    private readonly server = new FakeZerobusServer(),
  ) {
    // Refused as the SDK adapter refuses it at open: fatal-config, naming the field.
    checkStreamFields(spec.fields);
  }

  async submit(ipc: Uint8Array): Promise<number> {
    if (this.options.waitBlocksSubmit === true) await this.lockFree;
    this.submits += 1;
    this.check('submit', this.submits);
    // Refused as the binding refuses it: poison-batch, no offset used, the stream unharmed.
    checkStreamBatch(this.spec, ipc);
    const cap = this.options.maxInflight ?? 1000;
    while (this.nextOffset - 1 - this.ackedUpTo >= cap) {
      await this.untilAcked(this.nextOffset - cap);
      this.ensureAlive();
    }
    const offset = this.nextOffset++;
    this.unacked.set(offset, ipc);
    const bandwidth = this.options.bandwidthBytesPerSec ?? Number.POSITIVE_INFINITY;
    const start = Math.max(performance.now(), this.wireFreeAt);
    this.wireFreeAt = start + (ipc.byteLength * 1000) / bandwidth;
    const latency = this.options.ackLatencyMs ?? 0;
    if (latency !== 'manual') {
      this.schedule(this.wireFreeAt + latency - performance.now(), () => this.acknowledge(offset));
    }
    return offset;
  }

  /** With `ackLatencyMs: 'manual'`: durably acknowledges everything up to `offset`. */
  acknowledgeUpTo(offset: number): void {
    this.acknowledge(Math.min(offset, this.nextOffset - 1));
  }

  async waitForOffset(offset: number): Promise<void> {
    this.waits += 1;
    this.check('wait', this.waits);
    if (offset >= this.nextOffset) {
      // The real SDK would block until its flush timeout: fail loudly instead.
      throw new ZerobusSinkError(
        'fatal-config',
        `waitForOffset(${offset}) before submit returned that offset (next is ${this.nextOffset})`,
      );
    }
    if (this.options.waitBlocksSubmit !== true) return this.untilAcked(offset);
    const wait = this.untilAcked(offset);
    this.lockFree = wait.then(
      () => undefined,
      () => undefined,
    );
    return wait;
  }

  async flush(): Promise<void> {
    if (this.nextOffset > 0) await this.waitForOffset(this.nextOffset - 1);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    if (this.dead === null) this.kill(new ZerobusSinkError('poison-stream', 'stream closed'));
  }

  /** Batches this stream accepted (offsets it handed out) since it was opened. */
  get accepted(): number {
    return this.nextOffset;
  }

  /** Batches handed to this stream and not yet acknowledged. */
  get pending(): number {
    return this.nextOffset - 1 - this.ackedUpTo;
  }

  get isDead(): boolean {
    return this.dead !== null;
  }

  /**
   * The server takes the batches up to `offset`; they are acknowledged only
   * once it holds them durably. An in-memory server holds them at once, so
   * acknowledgement stays synchronous there; a durable one acknowledges after
   * its append is fsync'd, and a stream that died meanwhile acknowledges
   * nothing (the batches are then on the server, unacknowledged).
   */
  private acknowledge(offset: number): void {
    if (this.dead !== null || offset <= this.persistingUpTo) return;
    const payloads: Uint8Array[] = [];
    for (let o = this.persistingUpTo + 1; o <= offset; o++) {
      const payload = this.unacked.get(o);
      if (payload !== undefined) payloads.push(payload);
    }
    this.persistingUpTo = offset;
    if (!this.server.isDurable) {
      this.complete(offset);
      return;
    }
    this.server.persist(payloads).then(
      () => {
        this.complete(offset);
      },
      (error: unknown) => {
        if (this.dead !== null) return;
        this.kill(
          new ZerobusSinkError(
            'poison-stream',
            `the fake server could not persist batches up to offset ${offset} of ${this.spec.table}`,
            error,
          ),
        );
      },
    );
  }

  private complete(offset: number): void {
    if (this.dead !== null || offset <= this.ackedUpTo) return;
    for (let o = this.ackedUpTo + 1; o <= offset; o++) {
      const payload = this.unacked.get(o);
      if (payload !== undefined) {
        this.server.acknowledged += 1;
        if (this.server.retains) this.server.batches.push(payload);
      }
      this.unacked.delete(o);
    }
    this.ackedUpTo = offset;
    for (let i = this.ackWaiters.length - 1; i >= 0; i--) {
      const w = this.ackWaiters[i];
      if (w !== undefined && w.offset <= offset) {
        this.ackWaiters.splice(i, 1);
        w.resolve();
      }
    }
  }

  private untilAcked(offset: number): Promise<void> {
    this.ensureAlive();
    if (offset <= this.ackedUpTo) return Promise.resolve();
    return new Promise((resolve, reject) => this.ackWaiters.push({ offset, resolve, reject }));
  }

  private check(op: Fault['op'], nth: number): void {
    this.ensureAlive();
    const fault = this.options.faults?.find((f) => f.op === op && f.nth === nth);
    if (fault === undefined) return;
    const error = new ZerobusSinkError(
      fault.failure,
      `injected ${fault.failure} on ${op} #${nth} of ${this.spec.table}`,
    );
    if (fault.failure === 'poison-stream') this.kill(error);
    throw error;
  }

  private kill(error: ZerobusSinkError): void {
    this.dead = error;
    for (const payload of this.unacked.values()) this.server.unacknowledgedAtDeath.push(payload);
    this.unacked.clear();
    for (const w of this.ackWaiters.splice(0)) w.reject(error);
  }

  private ensureAlive(): void {
    if (this.dead !== null) throw this.dead;
  }

  private schedule(ms: number, run: () => void): void {
    const t = setTimeout(
      () => {
        this.timers.delete(t);
        run();
      },
      Math.max(0, ms),
    );
    this.timers.add(t);
  }
}

/** How a FakeTransportFactory's streams behave, and the server they share. */
export interface FakeTransportFactoryOptions extends Omit<FakeTransportOptions, 'faults'> {
  /**
   * The failures of each stream, by the order it was opened (0, 1, …), so a
   * rebuilt stream can be healthy while its predecessor was poisoned.
   * Default: none.
   */
  readonly faults?: (openIndex: number) => readonly Fault[];
  /** The shared server: e.g. `{ persistDir }` for acknowledgements that survive a process kill. */
  readonly server?: FakeServerOptions;
}

/** Opens FakeZerobusTransports that share one FakeZerobusServer. */
export class FakeTransportFactory implements TransportFactory {
  readonly server: FakeZerobusServer;
  readonly opened: FakeZerobusTransport[] = [];
  private readonly options: Omit<FakeTransportOptions, 'faults'>;
  private readonly faults: (openIndex: number) => readonly Fault[];

  constructor(options: FakeTransportFactoryOptions = {}) {
    const { faults = () => [], server = {}, ...stream } = options;
    this.options = stream;
    this.faults = faults;
    this.server = new FakeZerobusServer(server);
  }

  async open(spec: StreamSpec): Promise<ZerobusTransport> {
    const transport = new FakeZerobusTransport(
      spec,
      { ...this.options, faults: this.faults(this.opened.length) },
      this.server,
    );
    this.opened.push(transport);
    return transport;
  }
}

/** A FakeTransportFactory: `fakeZerobus({ ackLatencyMs: 1 })` reads as the transport it stands for. */
export function fakeZerobus(options: FakeTransportFactoryOptions = {}): FakeTransportFactory {
  return new FakeTransportFactory(options);
}

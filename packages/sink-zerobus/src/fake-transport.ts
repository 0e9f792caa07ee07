import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { ThalwegError } from '@thalweg/connector-core';
import { ZerobusSinkError, type ZerobusFailure } from './errors.js';
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

/**
 * Where a durable fake server puts what it acknowledges: `append` resolves
 * only once the payloads are on stable storage. The seam tests replace to
 * hold an append open and see that nothing is acknowledged before it ends.
 */
export interface FakeServerLog {
  append(payloads: readonly Uint8Array[]): Promise<void>;
  close(): Promise<void>;
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
}

/** What the fake server durably holds, shared by every stream of a factory. */
export class FakeZerobusServer {
  /** Every acknowledged batch payload, in acknowledgement order per stream. */
  readonly batches: Uint8Array[] = [];
  /** Payloads received but never acknowledged when their stream died: they may be on the server too. */
  readonly unacknowledgedAtDeath: Uint8Array[] = [];
  private readonly log: FakeServerLog | null;
  /** Appends run one after another, so a file never interleaves two of them. */
  private appending: Promise<void> = Promise.resolve();

  constructor(options: FakeServerOptions = {}) {
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
 * 0, 1, 2, … per stream; cumulative acknowledgement; a cap on in-flight
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
  ) {}

  async submit(ipc: Uint8Array): Promise<number> {
    if (this.options.waitBlocksSubmit === true) await this.lockFree;
    this.submits += 1;
    this.check('submit', this.submits);
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
      if (payload !== undefined) this.server.batches.push(payload);
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

/**
 * Opens FakeZerobusTransports that share one FakeZerobusServer. `faults`
 * chooses the failures of each stream by the order it was opened (0, 1, …),
 * so a rebuilt stream can be healthy while its predecessor was poisoned.
 */
export class FakeTransportFactory implements TransportFactory {
  readonly server: FakeZerobusServer;
  readonly opened: FakeZerobusTransport[] = [];

  /** `server`: e.g. `{ persistDir }` for a server whose acknowledgements survive a process kill. */
  constructor(
    private readonly options: Omit<FakeTransportOptions, 'faults'> = {},
    private readonly faults: (openIndex: number) => readonly Fault[] = () => [],
    server: FakeServerOptions = {},
  ) {
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

/** The file a durable fake server appends to: one per server instance, never reopened. */
const LOG_FILE = /^fake-zerobus-[0-9a-z-]+\.log$/;
/** Starts every log file: a file without it is not a fake server log. */
const LOG_MAGIC = Buffer.from('TWGFZB01', 'ascii');
/** Per record: payload length (u32 BE), then the CRC-32 of the payload (u32 BE). */
const RECORD_HEADER = 8;

export type FakeServerLogErrorCode = 'TWG_ZEROBUS_FAKE_LOG_CORRUPT';

/** A durable fake server's log holds bytes no append wrote: names the file and the byte offset. */
export class FakeServerLogError extends ThalwegError<FakeServerLogErrorCode> {
  constructor(
    readonly file: string,
    readonly offset: number,
    reason: string,
  ) {
    super({
      code: 'TWG_ZEROBUS_FAKE_LOG_CORRUPT',
      errorClass: 'fatal-config',
      message: `${file} at byte ${offset}: ${reason}`,
    });
  }
}

/** The part of a file handle the log uses: the seam to observe write-then-sync ordering. */
export interface LogFileHandle {
  write(buffer: Uint8Array): Promise<unknown>;
  sync(): Promise<void>;
  close(): Promise<void>;
}

export type LogFileOpener = (path: string) => Promise<LogFileHandle>;

const appendOnly: LogFileOpener = (path) => open(path, 'a');

/**
 * Length-prefixed, checksummed payloads in a file of its own (a new name
 * per instance: a later process never appends after a torn tail), written
 * then fsync'd before `append` resolves.
 */
export class FileServerLog implements FakeServerLog {
  readonly file: string;
  private handle: Promise<LogFileHandle> | null = null;
  private written = false;

  constructor(
    readonly dir: string,
    private readonly openFile: LogFileOpener = appendOnly,
  ) {
    const unique = `${Date.now().toString(36)}-${process.pid.toString(36)}-${randomBytes(4).toString('hex')}`;
    this.file = join(dir, `fake-zerobus-${unique}.log`);
  }

  async append(payloads: readonly Uint8Array[]): Promise<void> {
    if (payloads.length === 0) return;
    this.handle ??= mkdir(this.dir, { recursive: true }).then(() => this.openFile(this.file));
    const handle = await this.handle;
    const parts: Uint8Array[] = this.written ? [] : [LOG_MAGIC];
    for (const payload of payloads) {
      const header = Buffer.alloc(RECORD_HEADER);
      header.writeUInt32BE(payload.byteLength, 0);
      header.writeUInt32BE(crc32(payload), 4);
      parts.push(header, payload);
    }
    await handle.write(Buffer.concat(parts));
    this.written = true;
    await handle.sync();
  }

  async close(): Promise<void> {
    const handle = this.handle;
    this.handle = null;
    if (handle !== null) await (await handle).close();
  }
}

/**
 * Every batch payload a durable fake server acknowledged, file by file in
 * the order they were created and in append order within each. A partial
 * record at the end of a file is ignored: the server died while writing it,
 * before its fsync, so it was never acknowledged. Anything else that does not
 * parse is a FakeServerLogError naming the file and offset. A directory that
 * does not exist holds nothing (no batch was ever acknowledged).
 */
export async function readFakeServerBatches(dir: string): Promise<Uint8Array[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (error) {
    if (isNotFound(error)) return [];
    throw error;
  }
  const out: Uint8Array[] = [];
  for (const name of names.filter((n) => LOG_FILE.test(n)).sort(byCreation)) {
    const file = join(dir, name);
    out.push(...parseServerLog(file, await readFile(file)));
  }
  return out;
}

/** The payloads of one log file's bytes (see readFakeServerBatches). */
export function parseServerLog(file: string, bytes: Uint8Array): Uint8Array[] {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (buf.byteLength < LOG_MAGIC.byteLength) {
    // A torn first append: only a prefix of the magic can have reached the file.
    if (LOG_MAGIC.subarray(0, buf.byteLength).equals(buf)) return [];
    throw new FakeServerLogError(file, 0, 'not a fake server log (bad magic)');
  }
  if (!buf.subarray(0, LOG_MAGIC.byteLength).equals(LOG_MAGIC)) {
    throw new FakeServerLogError(file, 0, 'not a fake server log (bad magic)');
  }
  const out: Uint8Array[] = [];
  let at = LOG_MAGIC.byteLength;
  while (at < buf.byteLength) {
    if (buf.byteLength - at < RECORD_HEADER) break;
    const length = buf.readUInt32BE(at);
    const sum = buf.readUInt32BE(at + 4);
    if (length === 0) throw new FakeServerLogError(file, at, 'a record of length 0');
    const end = at + RECORD_HEADER + length;
    if (end > buf.byteLength) break;
    const payload = buf.subarray(at + RECORD_HEADER, end);
    if (crc32(payload) !== sum) {
      throw new FakeServerLogError(file, at, `checksum mismatch in a record of ${length} bytes`);
    }
    out.push(new Uint8Array(payload));
    at = end;
  }
  return out;
}

/** File names start with the creation time in base 36: compare numerically, then by name. */
function byCreation(a: string, b: string): number {
  const time = (n: string): number =>
    parseInt(n.slice('fake-zerobus-'.length).split('-')[0] ?? '', 36);
  return time(a) - time(b) || (a < b ? -1 : a > b ? 1 : 0);
}

function isNotFound(error: unknown): boolean {
  return typeof error === 'object' && error !== null && 'code' in error && error.code === 'ENOENT';
}

import { status, type ServerDuplexStream } from '@grpc/grpc-js';
import { decodeRows, decodeSchema, describeSchema, rowCountOf } from './flight-frames.js';
import type { FlightData, PutResult } from './flight-service.js';

/** One record batch message as the peer received it. */
export interface ReceivedBatch {
  readonly table: string;
  readonly connection: number;
  /** The client's `offset_id`: 0, 1, 2, … on each connection. */
  readonly wireOffset: number;
  readonly rows: number;
  /** Decoded rows, kept for audits unless the peer was told not to. */
  readonly values: readonly Record<string, unknown>[] | null;
  /** Covered by an acknowledgement the peer sent. */
  acknowledged: boolean;
}

/** What a data message gets instead of a plain acknowledgement. */
export type Fate =
  | { readonly kind: 'ack' }
  | { readonly kind: 'fail'; readonly code: status; readonly details: string }
  | { readonly kind: 'rotate'; readonly graceMs: number };

/** The peer's side of a connection: settings, audits, one-shot faults. */
export interface PeerHooks {
  readonly ackDelayMs: number;
  readonly keepRows: boolean;
  expectedSchema(table: string): readonly string[] | undefined;
  /** Decided per message, in arrival order across connections; `setup` is the schema message. */
  fate(setup: boolean): Fate;
  received(batch: ReceivedBatch): void;
  violation(message: string): void;
}

interface PendingAck {
  readonly batch: ReceivedBatch;
  readonly cumulativeRows: number;
  readonly graceMs: number | null;
  due: boolean;
}

/**
 * One DoPut call. The first message must be the schema, answered at once
 * with the ready signal `{"ack_up_to_offset":-1,"ack_up_to_records":0}`.
 * Every later message is a record batch carrying `{"offset_id":n}`, with n
 * counting from 0 on this connection; it is acknowledged after the peer's
 * ack delay, cumulatively and in order, with the rows received so far on
 * this connection. Acknowledgements can be held and released by tests.
 */
export class PeerConnection {
  state: 'open' | 'ended' | 'failed' | 'cancelled' = 'open';
  /** The gRPC status the peer ended this connection with, if it failed it. */
  failedWith: status | null = null;
  private schemaHeader: Buffer | null = null;
  private nextWireOffset = 0;
  private rows = 0;
  private held = false;
  private readonly pending: PendingAck[] = [];
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(
    readonly id: number,
    readonly table: string,
    private readonly call: ServerDuplexStream<FlightData, PutResult>,
    private readonly hooks: PeerHooks,
  ) {
    call.on('data', (message: FlightData) => this.onMessage(message));
    call.on('end', () => this.onHalfClose());
    call.on('cancelled', () => this.stop('cancelled'));
    call.on('error', () => this.stop('cancelled'));
  }

  /** Record batch messages received on this connection. */
  get messages(): number {
    return this.nextWireOffset;
  }

  /** Stops sending acknowledgements until `release`: the client's waits block meanwhile. */
  holdAcks(): void {
    this.held = true;
  }

  release(): void {
    this.held = false;
    this.drain();
  }

  /** Ends the call with a gRPC status, as a failing server would. */
  fail(code: status, details: string): void {
    if (this.state !== 'open') return;
    this.failedWith = code;
    this.stop('failed');
    this.call.emit('error', { code, details });
  }

  private onMessage(message: FlightData): void {
    if (this.state !== 'open') return;
    try {
      if (this.schemaHeader === null) this.onSchema(message);
      else this.onBatch(message);
    } catch (error) {
      this.hooks.violation(`connection ${this.id}: ${String(error)}`);
      this.fail(status.INVALID_ARGUMENT, String(error));
    }
  }

  private onSchema(message: FlightData): void {
    const received = describeSchema(decodeSchema(message.data_header));
    const fate = this.hooks.fate(true);
    if (fate.kind === 'fail') {
      this.fail(fate.code, fate.details);
      return;
    }
    const expected = this.hooks.expectedSchema(this.table);
    if (expected !== undefined && expected.join() !== received.join()) {
      this.fail(
        status.INVALID_ARGUMENT,
        `schema of ${this.table} does not match the table: expected [${expected.join(', ')}], got [${received.join(', ')}]`,
      );
      return;
    }
    this.schemaHeader = message.data_header;
    this.send({ ack_up_to_offset: -1, ack_up_to_records: 0 });
  }

  private onBatch(message: FlightData): void {
    const meta = JSON.parse(message.app_metadata.toString('utf8')) as { offset_id?: unknown };
    if (meta.offset_id !== this.nextWireOffset)
      throw new Error(`offset_id ${String(meta.offset_id)} where ${this.nextWireOffset} was due`);
    const rows = rowCountOf(message.data_header);
    const values =
      this.hooks.keepRows && this.schemaHeader !== null
        ? decodeRows(this.schemaHeader, message.data_header, message.data_body)
        : null;
    const batch: ReceivedBatch = {
      table: this.table,
      connection: this.id,
      wireOffset: this.nextWireOffset++,
      rows,
      values,
      acknowledged: false,
    };
    this.hooks.received(batch);
    const fate = this.hooks.fate(false);
    if (fate.kind === 'fail') {
      this.fail(fate.code, fate.details);
      return;
    }
    this.rows += rows;
    const entry: PendingAck = {
      batch,
      cumulativeRows: this.rows,
      graceMs: fate.kind === 'rotate' ? fate.graceMs : null,
      due: false,
    };
    this.pending.push(entry);
    this.after(this.hooks.ackDelayMs, () => {
      entry.due = true;
      this.drain();
    });
  }

  /** Sends every due acknowledgement at the head of the queue, in order. */
  private drain(): void {
    while (!this.held && this.state === 'open') {
      const head = this.pending[0];
      if (head?.due !== true) return;
      this.pending.shift();
      head.batch.acknowledged = true;
      this.send({
        ack_up_to_offset: head.batch.wireOffset,
        ack_up_to_records: head.cumulativeRows,
        ...(head.graceMs === null ? {} : { close_stream_duration_ms: head.graceMs }),
      });
      // A rotating server closes the stream itself once the grace period is over.
      if (head.graceMs !== null) this.after(head.graceMs, () => this.end());
    }
  }

  private onHalfClose(): void {
    // The client closes after its own flush: whatever is still queued is acknowledged now.
    for (const entry of this.pending) entry.due = true;
    this.held = false;
    this.drain();
    this.end();
  }

  private end(): void {
    if (this.state !== 'open') return;
    this.stop('ended');
    this.call.end();
  }

  private send(ack: Record<string, number>): void {
    this.call.write({ app_metadata: Buffer.from(JSON.stringify(ack)) });
  }

  private after(ms: number, run: () => void): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      run();
    }, ms);
    this.timers.add(timer);
  }

  private stop(state: PeerConnection['state']): void {
    if (this.state !== 'open') return;
    this.state = state;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }
}

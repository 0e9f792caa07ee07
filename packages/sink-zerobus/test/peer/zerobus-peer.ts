import {
  Metadata,
  Server,
  ServerCredentials,
  status,
  type ServerDuplexStream,
} from '@grpc/grpc-js';
import type { Schema } from 'apache-arrow';
import { describeSchema } from './flight-frames.js';
import { flightService, type FlightData, type PutResult } from './flight-service.js';
import {
  PeerConnection,
  type Fate,
  type PeerHooks,
  type ReceivedBatch,
} from './peer-connection.js';
import { TokenEndpoint } from './token-endpoint.js';

export interface PeerOptions {
  readonly clientId?: string;
  readonly clientSecret?: string;
  readonly ackDelayMs?: number;
  /** Decode and keep every batch's rows (audits); off for benchmarks. */
  readonly keepRows?: boolean;
}

interface Armed {
  readonly atSetup: boolean;
  remaining: number;
  readonly fate: Exclude<Fate, { kind: 'ack' }>;
  times: number;
  readonly every: number;
}

/**
 * A Zerobus-compatible peer on 127.0.0.1 for driving the real binding: the
 * OAuth token endpoint over HTTP and Arrow Flight DoPut over plaintext gRPC,
 * both on ephemeral ports. Point the SDK at `endpoint` (the SDK takes "127"
 * as the workspace id from it) and `unityCatalogUrl`.
 *
 * It counts and keeps what it receives per table, checks the client's side
 * of the protocol (auth header, table header, schema first, offset_id in
 * sequence; breaches land in `violations`), and has knobs for the hazards:
 * ack delay, held acknowledgements per connection, a gRPC status after N
 * messages, a rotation request, and a per-table schema it refuses others for.
 */
export class ZerobusPeer {
  readonly connections: PeerConnection[] = [];
  readonly batches: ReceivedBatch[] = [];
  readonly violations: string[] = [];
  readonly knobs: { ackDelayMs: number; keepRows: boolean };
  private readonly armed: Armed[] = [];
  private readonly schemas = new Map<string, readonly string[]>();
  private server: Server | null = null;
  private grpcPort = 0;
  private httpPort = 0;

  private readonly hooks: PeerHooks;

  private constructor(
    readonly tokens: TokenEndpoint,
    options: PeerOptions,
  ) {
    const knobs = { ackDelayMs: options.ackDelayMs ?? 0, keepRows: options.keepRows ?? true };
    this.knobs = knobs;
    this.hooks = {
      get ackDelayMs() {
        return knobs.ackDelayMs;
      },
      get keepRows() {
        return knobs.keepRows;
      },
      expectedSchema: (table) => this.schemas.get(table),
      fate: (setup) => this.fate(setup),
      received: (batch) => this.batches.push(batch),
      violation: (message) => this.violations.push(message),
    };
  }

  static async start(options: PeerOptions = {}): Promise<ZerobusPeer> {
    const tokens = new TokenEndpoint(
      options.clientId ?? 'peer-client',
      options.clientSecret ?? 'peer-secret',
    );
    const peer = new ZerobusPeer(tokens, options);
    peer.httpPort = await tokens.start();
    const server = new Server({ 'grpc.max_receive_message_length': -1 });
    server.addService(flightService(), {
      DoPut: (call: ServerDuplexStream<FlightData, PutResult>) => peer.accept(call),
    });
    peer.grpcPort = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (e, port) =>
        e === null ? resolve(port) : reject(e),
      ),
    );
    peer.server = server;
    return peer;
  }

  /** The Zerobus endpoint: a plaintext URL whose first host label ("127") is the workspace id. */
  get endpoint(): string {
    return `http://127.0.0.1:${this.grpcPort}`;
  }

  get unityCatalogUrl(): string {
    return `http://127.0.0.1:${this.httpPort}`;
  }

  /** Streams of `table` are refused (INVALID_ARGUMENT at setup) unless their schema is this one. */
  expectSchema(table: string, schema: Schema): void {
    this.schemas.set(table, describeSchema(schema));
  }

  /**
   * The `after`-th data message from now (0: the next schema message, i.e.
   * the next stream setup) is answered with `code` instead of an
   * acknowledgement, `times` times over, re-armed for every `every` messages.
   */
  failAfter(after: number, code: status, details: string, times = 1): void {
    const fate = { kind: 'fail', code, details } as const;
    this.armed.push({ atSetup: after === 0, remaining: after, fate, times, every: after });
  }

  /** The acknowledgement of the `after`-th data message from now asks the client to rotate. */
  rotateAfter(after: number, graceMs: number): void {
    if (after < 1) throw new RangeError('a rotation follows a data message: after >= 1');
    const fate = { kind: 'rotate', graceMs } as const;
    this.armed.push({ atSetup: false, remaining: after, fate, times: 1, every: after });
  }

  rowsReceived(table: string): number {
    return this.batches.filter((b) => b.table === table).reduce((n, b) => n + b.rows, 0);
  }

  rowsAcknowledged(table: string): number {
    return this.batches
      .filter((b) => b.table === table && b.acknowledged)
      .reduce((n, b) => n + b.rows, 0);
  }

  /** Every received value of `column` in `table`, in arrival order (duplicates included). */
  values(table: string, column: string, acknowledgedOnly = false): unknown[] {
    return this.batches
      .filter((b) => b.table === table && (!acknowledgedOnly || b.acknowledged))
      .flatMap((b) => (b.values ?? []).map((row) => row[column]));
  }

  async stop(): Promise<void> {
    this.server?.forceShutdown();
    this.server = null;
    await this.tokens.stop();
  }

  private accept(call: ServerDuplexStream<FlightData, PutResult>): void {
    const table = single(call.metadata, 'x-databricks-zerobus-table-name');
    const connection = new PeerConnection(this.connections.length, table ?? '', call, this.hooks);
    this.connections.push(connection);
    if (!this.tokens.accepts(single(call.metadata, 'authorization'))) {
      connection.fail(status.UNAUTHENTICATED, 'no valid bearer token');
    } else if (table === undefined) {
      this.violations.push(
        `connection ${connection.id}: no x-databricks-zerobus-table-name header`,
      );
      connection.fail(status.INVALID_ARGUMENT, 'table name header missing');
    }
  }

  private fate(setup: boolean): Fate {
    let fired: Fate = { kind: 'ack' };
    for (const armed of [...this.armed]) {
      if (setup !== armed.atSetup) continue;
      if (!setup) armed.remaining -= 1;
      if (armed.remaining > 0 || fired.kind !== 'ack') continue;
      fired = armed.fate;
      armed.times -= 1;
      if (armed.times > 0) armed.remaining = armed.every;
      else this.armed.splice(this.armed.indexOf(armed), 1);
    }
    return fired;
  }
}

function single(metadata: Metadata, key: string): string | undefined {
  const [value] = metadata.get(key);
  return typeof value === 'string' ? value : undefined;
}

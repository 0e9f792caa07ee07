/**
 * The one boundary the Zerobus sink inverts. A stream takes Arrow IPC bytes
 * (exactly one record batch in IPC stream format) and assigns each accepted
 * batch a transport offset 0, 1, 2, … for the life of the stream.
 * Acknowledgement is cumulative: `waitForOffset(n)` resolving means every
 * batch at or below `n` is durable on the server.
 *
 * Failures are `ZerobusSinkError`s whose `failure` says what to do.
 */
export interface ZerobusTransport {
  /** Resolves with the batch's offset once it is QUEUED (not durable). May wait while the in-flight cap is reached. */
  submit(ipc: Uint8Array): Promise<number>;
  /** Resolves once every offset <= `offset` is durably acknowledged. Only offsets `submit` returned may be waited on. */
  waitForOffset(offset: number): Promise<void>;
  /** Resolves once everything submitted so far is acknowledged. */
  flush(): Promise<void>;
  /**
   * Releases the stream. After a poison failure the sink closes the stream
   * and replays, on a new one, every batch it had not seen confirmed: it
   * keeps those batches itself, so no transport needs to hand them back.
   */
  close(): Promise<void>;
}

/** One column of the stream schema as the SDK declares it. */
export interface StreamField {
  readonly name: string;
  readonly type:
    | 'boolean'
    | 'int8'
    | 'int16'
    | 'int32'
    | 'int64'
    | 'float32'
    | 'float64'
    | 'utf8'
    | 'large-utf8'
    | 'binary'
    | 'large-binary'
    | 'date32'
    | 'date64'
    | 'timestamp-micros'
    | 'timestamp-nanos';
  readonly nullable: boolean;
}

export interface StreamSpec {
  /** Unity Catalog name `catalog.schema.table`. */
  readonly table: string;
  readonly fields: readonly StreamField[];
}

/** Opens streams; the sink's pool holds several to overlap submit and confirm. */
export interface TransportFactory {
  open(spec: StreamSpec): Promise<ZerobusTransport>;
}

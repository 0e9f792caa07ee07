import type { QuarantineReason } from '../flow-control/quarantine-lane.js';
import { RecordIdHasher } from '../record-id.js';
import type { SourceBatch, SourceRecord } from '../source.js';
import type { Derivation, DeriveContext, MaybePromise, SyncDerivation } from './parts.js';

/** A record a derivation refused: where it is, and why. */
export interface QuarantineNote {
  readonly offset: number;
  readonly reason: QuarantineReason;
  readonly detail: string;
}

/** A derivation's outcome over one raw batch. */
export interface DerivationResult<B> {
  readonly batch: B | null;
  readonly quarantined: readonly QuarantineNote[];
}

/** The context of one raw batch: ids bound to its partition and the source's cluster. */
class BatchContext implements DeriveContext {
  readonly quarantined: QuarantineNote[] = [];
  private hasher: RecordIdHasher | null = null;

  constructor(
    private readonly cluster: string,
    private readonly batch: SourceBatch,
  ) {}

  recordId(record: SourceRecord): Buffer {
    const { topic, partition } = this.batch.span;
    this.hasher ??= new RecordIdHasher(this.cluster, topic, partition);
    return this.hasher.id(record.offset, record.value);
  }

  quarantine(record: SourceRecord, reason: QuarantineReason, detail: string): void {
    this.quarantined.push({ offset: record.offset, reason, detail });
  }
}

/**
 * Runs a derivation over one raw batch, collecting what it quarantined. A
 * derivation that answers at once is answered at once (no promise per batch);
 * one that answers later (a worker thread's) is answered when it does.
 */
export function runDerivation<B>(
  derive: Derivation<B>,
  cluster: string,
  batch: SourceBatch,
): MaybePromise<DerivationResult<B>> {
  const context = new BatchContext(cluster, batch);
  const derived = derive(batch, context);
  if (derived instanceof Promise) {
    return derived.then((b) => ({ batch: b, quarantined: context.quarantined }));
  }
  return { batch: derived, quarantined: context.quarantined };
}

/** `runDerivation` of a derivation known to answer at once: its result, not a promise. */
export function runSyncDerivation<B>(
  derive: SyncDerivation<B>,
  cluster: string,
  batch: SourceBatch,
): DerivationResult<B> {
  const context = new BatchContext(cluster, batch);
  return { batch: derive(batch, context), quarantined: context.quarantined };
}

/**
 * A record refused by a row mapping given to `mapRecords`: thrown, it
 * quarantines that record with its reason. Any other error is a `decode`
 * refusal with the error's message.
 */
export class RecordRefused extends Error {
  constructor(
    readonly reason: QuarantineReason,
    detail: string,
  ) {
    super(detail);
    this.name = 'RecordRefused';
  }
}

/**
 * The per-record loop every row-mapping part shares: maps each record,
 * quarantining the one whose mapping throws (its reason from `RecordRefused`,
 * `decode` otherwise) and keeping the others in order.
 */
export function mapRecords<T>(
  batch: SourceBatch,
  context: DeriveContext,
  map: (record: SourceRecord) => T,
): { readonly records: SourceRecord[]; readonly mapped: T[] } {
  const records: SourceRecord[] = [];
  const mapped: T[] = [];
  for (const record of batch.records) {
    let value: T;
    try {
      value = map(record);
    } catch (error) {
      const reason = error instanceof RecordRefused ? error.reason : 'decode';
      context.quarantine(record, reason, error instanceof Error ? error.message : String(error));
      continue;
    }
    records.push(record);
    mapped.push(value);
  }
  return { records, mapped };
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * A record's value parsed as JSON, for a part's `row` mapping. A value that
 * is not UTF-8 or not JSON throws, naming the offset, and the mapping's
 * caller quarantines that record as `decode`.
 */
export function recordJson(record: SourceRecord): unknown {
  let text: string;
  try {
    text = utf8.decode(record.value);
  } catch (error) {
    throw new Error(`offset ${record.offset}: the value is not UTF-8`, { cause: error });
  }
  return parseJsonText(text, record.offset);
}

/** `text` parsed as JSON; text that is not throws, naming the record's offset. */
export function parseJsonText(text: string, offset: number): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new Error(
      `offset ${offset}: the value is not JSON (${error instanceof Error ? error.message : String(error)})`,
      { cause: error },
    );
  }
}

/**
 * A `row` mapping over JSON payloads: each record's value parsed by
 * `recordJson` (a value that is not UTF-8 JSON throws, and the part
 * quarantines that record as `decode`), then handed to `map` with its
 * record. `T` is what the payload is expected to be; nothing checks it
 * beyond `map` itself and the sink's own check of what `map` returns.
 */
// T is the caller's statement of the payload's shape, asserted once here on purpose.
// eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters
export function fromJson<T, R>(
  map: (value: T, record: SourceRecord) => R,
): (record: SourceRecord) => R {
  return (record) => map(recordJson(record) as T, record);
}

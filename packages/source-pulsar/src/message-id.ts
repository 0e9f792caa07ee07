import { PulsarSourceError } from './errors.js';

/** The fields of Pulsar's MessageIdData that place a message; -1 where the protocol leaves one out. */
export interface MessageIdParts {
  readonly ledgerId: bigint;
  readonly entryId: bigint;
  readonly partition: number;
  readonly batchIndex: number;
  readonly batchSize: number;
}

/**
 * Decodes a base64 MessageIdData (protobuf: 1 ledgerId, 2 entryId as
 * uint64; 3 partition, 4 batch_index, 6 batch_size as int32; others
 * skipped). Throws TWG_PULSAR_MESSAGE_ID_INVALID, naming the id, on anything
 * else.
 */
export function decodeMessageId(base64: string): MessageIdParts {
  const bytes = Buffer.from(base64, 'base64');
  if (
    bytes.length === 0 ||
    bytes.toString('base64').replace(/=+$/, '') !== base64.replace(/=+$/, '')
  ) {
    throw invalid(base64, 'is not base64');
  }
  let at = 0;
  const varint = (): bigint => {
    let value = 0n;
    for (let shift = 0n; shift < 70n; shift += 7n) {
      const b = bytes[at++];
      if (b === undefined) throw invalid(base64, 'ends inside a field');
      value |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return value;
    }
    throw invalid(base64, 'has a varint longer than 10 bytes');
  };
  const int32 = (v: bigint): number => Number(BigInt.asIntN(32, v));
  let ledgerId: bigint | null = null;
  let entryId: bigint | null = null;
  let partition = -1;
  let batchIndex = -1;
  let batchSize = 0;
  while (at < bytes.length) {
    const tag = varint();
    const field = Number(tag >> 3n);
    const wire = Number(tag & 7n);
    if (wire === 0) {
      const v = varint();
      if (field === 1) ledgerId = BigInt.asUintN(64, v);
      else if (field === 2) entryId = BigInt.asUintN(64, v);
      else if (field === 3) partition = int32(v);
      else if (field === 4) batchIndex = int32(v);
      else if (field === 6) batchSize = int32(v);
    } else if (wire === 2) {
      const length = Number(varint());
      if (at + length > bytes.length)
        throw invalid(base64, `field ${String(field)} runs past the end`);
      at += length;
    } else if (wire === 1) {
      at += 8;
    } else if (wire === 5) {
      at += 4;
    } else {
      throw invalid(base64, `has wire type ${String(wire)} in field ${String(field)}`);
    }
  }
  if (ledgerId === null || entryId === null) throw invalid(base64, 'has no ledger or entry id');
  return { ledgerId, entryId, partition, batchIndex, batchSize };
}

/**
 * How a message id is packed into an offset (ADR 0032): `entryBits` for the
 * entry within its ledger, `batchBits` for the index within a batch, the
 * rest of the 53 bits of a safe integer for the ledger id. Fixed for the
 * life of a raw: every record id is computed from the offset.
 */
export interface OffsetLayout {
  readonly entryBits: number;
  readonly batchBits: number;
}

export const DEFAULT_OFFSET_LAYOUT: OffsetLayout = Object.freeze({ entryBits: 17, batchBits: 10 });

const SAFE_BITS = 53;

/** The offset of a message: ascending within a partition, the same on every redelivery. */
export function messageOffset(id: MessageIdParts, layout: OffsetLayout, messageId = ''): number {
  const { entryBits, batchBits } = layout;
  const ledgerBits = SAFE_BITS - entryBits - batchBits;
  const batch = BigInt(Math.max(0, id.batchIndex));
  const check = (value: bigint, bits: number, what: string): void => {
    if (value < 0n || value >= 1n << BigInt(bits)) {
      throw new PulsarSourceError(
        'TWG_PULSAR_ID_OUT_OF_RANGE',
        `message id ${messageId} (ledger ${String(id.ledgerId)}, entry ${String(id.entryId)}, ` +
          `batch index ${String(id.batchIndex)}): its ${what} ${String(value)} needs more than ` +
          `the ${String(bits)} bits offsetBits gives it (entry ${String(entryBits)}, batch ` +
          `${String(batchBits)}, ledger the rest of 53); choose offsetBits to fit the broker ` +
          "(managedLedgerMaxEntriesPerLedger, the producers' batchingMaxMessages), on a new raw",
      );
    }
  };
  check(id.ledgerId, ledgerBits, 'ledger id');
  check(id.entryId, entryBits, 'entry id');
  check(batch, batchBits, 'batch index');
  const packed =
    (id.ledgerId << BigInt(entryBits + batchBits)) | (id.entryId << BigInt(batchBits)) | batch;
  return Number(packed);
}

/** The layout, checked: both widths whole, at least 1 bit each, and ledger ids keeping at least 16. */
export function checkOffsetLayout(layout: OffsetLayout): OffsetLayout {
  const { entryBits, batchBits } = layout;
  const ok = (n: number) => Number.isInteger(n) && n >= 1;
  if (!ok(entryBits) || !ok(batchBits) || SAFE_BITS - entryBits - batchBits < 16) {
    throw new PulsarSourceError(
      'TWG_PULSAR_MISUSE',
      `offsetBits ${JSON.stringify(layout)}: entryBits and batchBits must be whole numbers >= 1 ` +
        'leaving at least 16 of the 53 bits for the ledger id',
    );
  }
  return layout;
}

function invalid(base64: string, why: string): PulsarSourceError {
  return new PulsarSourceError(
    'TWG_PULSAR_MESSAGE_ID_INVALID',
    `message id ${JSON.stringify(base64)} ${why}: not a Pulsar MessageIdData`,
  );
}

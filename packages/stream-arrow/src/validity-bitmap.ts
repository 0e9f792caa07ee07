import type { FieldSpec } from './batch-schema.js';
import { freshMemory, type ColumnMemory } from './column-memory.js';
import { ArrowBatchError } from './errors.js';

/**
 * An Arrow validity bitmap (bit i set = row i holds a value), allocated only
 * when the first null arrives: a column without nulls carries no bitmap and
 * a null count of 0, which readers take as "all valid".
 */
export class ValidityBitmap {
  private bits: Uint8Array | undefined;
  private nulls = 0;

  constructor(
    private readonly spec: FieldSpec,
    private readonly length: number,
    private readonly memory: ColumnMemory = freshMemory,
  ) {}

  /**
   * Records that `row` holds null, or refuses it for a non-nullable field
   * (undefined is reported as a missing field, null as a null).
   */
  setNull(row: number, value: null | undefined): void {
    if (!this.spec.nullable) {
      throw new ArrowBatchError(
        'TWG_ARROW_VALUE_MISSING',
        value === undefined ? 'missing in a non-nullable field' : 'null in a non-nullable field',
        { field: this.spec.name, row },
      );
    }
    if (this.bits === undefined) this.bits = allValid(this.memory, this.length);
    this.bits[row >> 3] = (this.bits[row >> 3] ?? 0) & ~(1 << (row & 7));
    this.nulls++;
  }

  get nullCount(): number {
    return this.nulls;
  }

  get buffer(): Uint8Array | undefined {
    return this.bits;
  }
}

/** Every bit of `length` rows set; the padding bits after the last row stay 0. */
function allValid(memory: ColumnMemory, length: number): Uint8Array {
  const bits = memory.bytes((length + 7) >> 3).fill(0xff);
  const tail = length & 7;
  if (tail !== 0) bits[bits.length - 1] = (1 << tail) - 1;
  return bits;
}

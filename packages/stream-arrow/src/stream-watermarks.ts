declare const submittedBrand: unique symbol;
declare const deliveredBrand: unique symbol;

/**
 * A stream's submitted high-water: the highest transport offset the sink has
 * handed to its transport. Observability only — it is a different type from
 * `DeliveredOffset` so that no durability decision can be made from it.
 */
export type SubmittedOffset = number & { readonly [submittedBrand]: true };

/** A stream's delivered high-water: every transport offset <= it is durable. */
export type DeliveredOffset = number & { readonly [deliveredBrand]: true };

/**
 * Submitted and delivered high-water marks of one stream (transport offsets
 * 0, 1, 2, … as the transport assigns them; -1 before the first). `pending`
 * is how far confirmation trails submission. Each stream owns its own
 * instance: nothing here is shared between streams or lanes.
 */
export class StreamWatermarks {
  private submittedHw = -1;
  private deliveredHw = -1;

  /** The transport accepted the batch at `offset`. Offsets ascend. */
  submitted(offset: number): void {
    if (!Number.isSafeInteger(offset) || offset <= this.submittedHw) {
      throw new RangeError(
        `submitted offset ${String(offset)} must be a safe integer above the submitted high-water ${this.submittedHw}`,
      );
    }
    this.submittedHw = offset;
  }

  /**
   * Everything up to `offset` is durably acknowledged (acknowledgement is
   * cumulative). Delivered never passes submitted and never moves back.
   */
  delivered(offset: number): void {
    if (!Number.isSafeInteger(offset) || offset > this.submittedHw) {
      throw new RangeError(
        `delivered offset ${String(offset)} is beyond the submitted high-water ${this.submittedHw}: ` +
          'a confirmation for a batch never submitted',
      );
    }
    if (offset > this.deliveredHw) this.deliveredHw = offset;
  }

  get submittedHighWater(): SubmittedOffset {
    return this.submittedHw as SubmittedOffset;
  }

  get deliveredHighWater(): DeliveredOffset {
    return this.deliveredHw as DeliveredOffset;
  }

  /** Batches submitted and not yet durably confirmed. */
  get pending(): number {
    return this.submittedHw - this.deliveredHw;
  }
}

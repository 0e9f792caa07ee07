/**
 * Work whose results must be acted on in the order it was started, while
 * the work itself overlaps: the ingest loop's content-dedup lookups, each
 * piece offered to the lanes only after every piece before it. At most
 * `limit` are outstanding: `offer` waits for the oldest beyond that.
 */
export class OrderedOffers<T> {
  private tail: Promise<void> = Promise.resolve();
  /** In offer order (a Set iterates in insertion order). */
  private readonly outstanding = new Set<Promise<void>>();

  constructor(
    private readonly limit: number,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** Runs `then` with `work`'s result once every earlier one ran; resolves when there is room for more. */
  async offer(work: Promise<T>, then: (result: T) => void): Promise<void> {
    const prior = this.tail;
    const done = (async () => {
      const result = await work;
      await prior;
      then(result);
    })().catch(this.onError);
    this.tail = done;
    this.outstanding.add(done);
    void done.finally(() => this.outstanding.delete(done));
    while (this.outstanding.size > this.limit) await this.outstanding.values().next().value;
  }

  /** Resolves once every offered result was acted on. */
  async drained(): Promise<void> {
    await this.tail;
  }
}

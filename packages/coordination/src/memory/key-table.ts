/** Bytes of a binary key: a 128-bit content hash. */
export const BINARY_KEY_BYTES = 16;
const WORDS = BINARY_KEY_BYTES / 4;
const EMPTY = 0;
const TOMBSTONE = -1;

/**
 * Packed binary keys as 32-bit words, four per key: the view every binary
 * operation reads. A view when `bytes` is 4-byte aligned, a copy otherwise.
 * Throws a RangeError when `bytes` holds fewer than `count` keys.
 */
export function keyWords(bytes: Uint8Array, count: number): Int32Array {
  if (!Number.isSafeInteger(count) || count < 0 || bytes.byteLength < count * BINARY_KEY_BYTES) {
    throw new RangeError(`${bytes.byteLength} bytes do not hold ${count} keys`);
  }
  if (bytes.byteOffset % 4 === 0)
    return new Int32Array(bytes.buffer, bytes.byteOffset, count * WORDS);
  return new Int32Array(bytes.slice(0, count * BINARY_KEY_BYTES).buffer);
}

/**
 * An exact index of 16-byte keys: each key held gets an entry number, stable
 * while it is held (its values live in the caller's columns, indexed by
 * it). Open addressing with linear probing over typed arrays, so holding a
 * key allocates nothing per key. Slots are hashed from all four words and a
 * per-table seed, so keys crafted to share a slot cannot be chosen without
 * it; keys are compared whole, so a collision only costs a probe.
 *
 * A slot holds its entry and that key's 32-bit hash side by side: a probe
 * past another key compares hashes within the slot's own cache line and
 * reads a held key's words only when they match, and a rehash walks the old
 * slots in order, placing each by its stored hash, so its reads and writes
 * run nearly in sequence rather than at random.
 *
 * Capacity (entries) is half the slots; past it the slots double and
 * `grown` is called with the new capacity, for the caller to widen its
 * columns. Removed keys leave tombstones, cleared by the next rehash.
 */
export class KeyTable {
  /** Two words per slot: the entry + 1 (or EMPTY, TOMBSTONE), then the key's hash. */
  private slots: Int32Array;
  private words: Int32Array;
  private liveEntries: Uint8Array;
  private free: Int32Array;
  private freeCount = 0;
  /** Entries [0, highWater) were handed out at some time (the rest never). */
  private highWater = 0;
  private used = 0;
  private tombstones = 0;
  /** Whether the last `insert` added its key (rather than finding it held). */
  created = false;

  constructor(
    capacity = 8,
    private readonly grown: (capacity: number) => void = () => undefined,
    private readonly seed: number = (Math.random() * 0x1_0000_0000) | 0,
  ) {
    let slots = 16;
    while (slots < capacity * 2) slots *= 2;
    this.slots = new Int32Array(slots * 2);
    this.words = new Int32Array((slots / 2) * WORDS);
    this.liveEntries = new Uint8Array(slots / 2);
    this.free = new Int32Array(slots / 2);
  }

  /** Entries a caller's columns must hold. */
  get capacity(): number {
    return this.slots.length / 4;
  }

  /** Keys held. */
  get size(): number {
    return this.used;
  }

  /** Entries that may be live: every live entry is below it. */
  get entryBound(): number {
    return this.highWater;
  }

  isLive(entry: number): boolean {
    return this.liveEntries[entry] === 1;
  }

  /** The entry of key `at` of `keys` (see {@link keyWords}), or -1. */
  find(keys: Int32Array, at: number): number {
    const slots = this.slots;
    const mask = (slots.length >> 1) - 1;
    const w = at * WORDS;
    const h = this.slotOf(keys, w);
    for (let s = h & mask; ; s = (s + 1) & mask) {
      const held = slots[s << 1] ?? EMPTY;
      if (held === EMPTY) return -1;
      if (held !== TOMBSTONE && slots[(s << 1) | 1] === h && this.same(held - 1, keys, w)) {
        return held - 1;
      }
    }
  }

  /** The entry of key `at`, added if not held (`created` tells which). */
  insert(keys: Int32Array, at: number): number {
    if ((this.used + this.tombstones + 1) * 4 > this.slots.length) this.rehash();
    const slots = this.slots;
    const mask = (slots.length >> 1) - 1;
    const w = at * WORDS;
    const h = this.slotOf(keys, w);
    let reuse = -1;
    let s = h & mask;
    for (; ; s = (s + 1) & mask) {
      const held = slots[s << 1] ?? EMPTY;
      if (held === EMPTY) break;
      if (held === TOMBSTONE) {
        if (reuse < 0) reuse = s;
      } else if (slots[(s << 1) | 1] === h && this.same(held - 1, keys, w)) {
        this.created = false;
        return held - 1;
      }
    }
    if (reuse >= 0) {
      s = reuse;
      this.tombstones -= 1;
    }
    const entry = this.freeCount > 0 ? (this.free[--this.freeCount] ?? 0) : this.highWater++;
    const e = entry * WORDS;
    this.words[e] = keys[w] ?? 0;
    this.words[e + 1] = keys[w + 1] ?? 0;
    this.words[e + 2] = keys[w + 2] ?? 0;
    this.words[e + 3] = keys[w + 3] ?? 0;
    this.liveEntries[entry] = 1;
    slots[s << 1] = entry + 1;
    slots[(s << 1) | 1] = h;
    this.used += 1;
    this.created = true;
    return entry;
  }

  /** Stops holding `entry`'s key; its number may be handed out again. */
  remove(entry: number): void {
    if (!this.isLive(entry)) return;
    const mask = (this.slots.length >> 1) - 1;
    for (let s = this.slotOf(this.words, entry * WORDS) & mask; ; s = (s + 1) & mask) {
      if (this.slots[s << 1] === entry + 1) {
        this.slots[s << 1] = TOMBSTONE;
        break;
      }
    }
    this.liveEntries[entry] = 0;
    this.free[this.freeCount++] = entry;
    this.used -= 1;
    this.tombstones += 1;
  }

  /** Writes `entry`'s key into `out` (packed keys as words) as key `at`. */
  copyKey(entry: number, out: Int32Array, at: number): void {
    const e = entry * WORDS;
    const w = at * WORDS;
    out[w] = this.words[e] ?? 0;
    out[w + 1] = this.words[e + 1] ?? 0;
    out[w + 2] = this.words[e + 2] ?? 0;
    out[w + 3] = this.words[e + 3] ?? 0;
  }

  /** Holds nothing, keeping its size. */
  clear(): void {
    this.slots.fill(EMPTY);
    this.liveEntries.fill(0);
    this.freeCount = 0;
    this.highWater = 0;
    this.used = 0;
    this.tombstones = 0;
  }

  /**
   * Rebuilds the slots without tombstones, doubled when over a quarter are
   * live. The old slots are walked in order and each key placed by its
   * stored hash: a key's new home is its old home or that plus the old slot
   * count, so the writes follow the reads. Any insertion order gives a
   * valid table; this one is the cheap one.
   */
  private rehash(): void {
    const old = this.slots;
    const grow = (this.used + 1) * 8 > old.length;
    const slots = new Int32Array(grow ? old.length * 2 : old.length);
    const mask = (slots.length >> 1) - 1;
    for (let i = 0; i < old.length; i += 2) {
      const held = old[i] ?? EMPTY;
      if (held === EMPTY || held === TOMBSTONE) continue;
      const h = old[i + 1] ?? 0;
      let s = h & mask;
      while (slots[s << 1] !== EMPTY) s = (s + 1) & mask;
      slots[s << 1] = held;
      slots[(s << 1) | 1] = h;
    }
    this.slots = slots;
    this.tombstones = 0;
    if (!grow) return;
    const capacity = slots.length / 4;
    const words = new Int32Array(capacity * WORDS);
    words.set(this.words);
    this.words = words;
    const live = new Uint8Array(capacity);
    live.set(this.liveEntries);
    this.liveEntries = live;
    const free = new Int32Array(capacity);
    free.set(this.free);
    this.free = free;
    this.grown(capacity);
  }

  private same(entry: number, keys: Int32Array, w: number): boolean {
    const e = entry * WORDS;
    const held = this.words;
    return (
      held[e] === keys[w] &&
      held[e + 1] === keys[w + 1] &&
      held[e + 2] === keys[w + 2] &&
      held[e + 3] === keys[w + 3]
    );
  }

  /** The key's hash as a signed 32-bit word (as a slot stores it). */
  private slotOf(keys: Int32Array, w: number): number {
    return keyHash(keys, w, this.seed) | 0;
  }
}

/** The 32-bit hash a table with `seed` places the key at word `w` of `keys` by (its slot: the low bits). */
export function keyHash(keys: Int32Array, w: number, seed: number): number {
  let h = Math.imul((keys[w] ?? 0) ^ seed, 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13) ^ (keys[w + 1] ?? 0), 0xc2b2ae35);
  h = Math.imul(h ^ (h >>> 16) ^ (keys[w + 2] ?? 0), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13) ^ (keys[w + 3] ?? 0), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

import { FileSourceError } from './errors.js';

/** Where the record at a batch boundary starts: a file of the set and a cursor position in it. */
export interface FilePlace {
  readonly fileIndex: number;
  readonly position: number;
}

/**
 * The file places of the batch boundaries yielded and not yet asked about.
 * `cursorAt` can only translate an offset where a batch ended (or reading
 * started): a place inside a batch was never recorded, and computing one
 * would mean re-reading, so it is refused rather than guessed.
 *
 * Bounded by acknowledgement: asking for offset `n` drops every boundary
 * below `n` (the position only moves forward), keeping `n` itself, because
 * a commit that failed is retried for the same position.
 */
export class BoundaryLog {
  private readonly places = new Map<number, FilePlace>();
  private floor = 0;
  private last = 0;

  /** Records that the record with `offset` is at `place`. */
  add(offset: number, place: FilePlace): void {
    if (offset < this.floor) return;
    this.places.set(offset, place);
    this.last = offset;
  }

  /** Forgets everything, then starts at `offset` (a seek). */
  reset(offset: number, place: FilePlace): void {
    this.places.clear();
    this.floor = offset;
    this.places.set(offset, place);
    this.last = offset;
  }

  placeOf(offset: number): FilePlace {
    const place = this.places.get(offset);
    if (place === undefined) {
      const lowest = this.places.keys().next().value;
      throw new FileSourceError(
        'TWG_FILE_POSITION_UNKNOWN',
        `offset ${offset} is not a batch boundary this source remembers ` +
          (offset < this.floor
            ? `(boundaries below ${this.floor}, the last one asked for, are dropped)`
            : lowest === undefined
              ? '(none are held)'
              : `(held: ${this.places.size} from ${lowest} to ${this.last})`),
        { field: 'next' },
      );
    }
    if (offset > this.floor) {
      // Offsets are added in increasing order, so the map iterates them sorted.
      for (const o of this.places.keys()) {
        if (o >= offset) break;
        this.places.delete(o);
      }
      this.floor = offset;
    }
    return place;
  }

  get size(): number {
    return this.places.size;
  }
}

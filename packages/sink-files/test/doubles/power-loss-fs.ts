import { basename, dirname } from 'node:path';
import type { SegmentFile, SegmentFs } from '../../src/index.js';

/**
 * What survives a simulated power loss:
 * - `synced-only`: exactly what fsync made durable: file contents as of their
 *   last `sync`, directory entries as of their directory's last `syncDir`.
 * - `any-subset`: that, plus any subset of the operations still in the page
 *   cache, applied out of order: some unsynced writes of a file (with holes
 *   read as zeros, the last one possibly torn) and some unsynced entry
 *   changes of a directory (each rename atomic: in or out).
 * - `torn-sectors`: as `any-subset` for directory entries, but unsynced
 *   writes reach the disk 512-byte sector by sector, each sector on its own:
 *   a write can keep its end and lose its start (read as zeros), so a torn
 *   append may end in its own newline.
 */
export type Survival = 'synced-only' | 'any-subset' | 'torn-sectors';

/** The unit in which `torn-sectors` writes reach the disk. */
const SECTOR = 512;

/** A disk after the crash: directory -> entry name -> bytes. */
export type DiskImage = Map<string, Map<string, Uint8Array>>;

export interface PowerLossOptions {
  /** The mutating operation (1-based) at which the power goes; none by default. */
  readonly crashAtOp?: number;
  readonly survival?: Survival;
  /** Deterministic choice of what survives under `any-subset`. */
  readonly seed?: number;
  /**
   * Makes the fsync of the files whose name (as created or opened) passes
   * `sync`, or every directory fsync, return without making anything
   * durable: how a missing fsync is shown to matter.
   */
  readonly skip?: { readonly sync?: (name: string) => boolean; readonly syncDir?: boolean };
}

interface PendingWrite {
  readonly offset: number;
  readonly bytes: Uint8Array;
}

interface Inode {
  data: Uint8Array;
  synced: Uint8Array;
  /** Writes since the last sync, in the order they were issued. */
  pending: PendingWrite[];
}

type EntryOp =
  | { kind: 'link'; name: string; inode: Inode }
  | { kind: 'unlink'; name: string }
  | { kind: 'rename'; from: string; to: string; inode: Inode };

interface Directory {
  live: Map<string, Inode>;
  durable: Map<string, Inode>;
  pending: EntryOp[];
}

/** The error every operation fails with once the power is gone. */
export const POWER_LOST = 'EIO: power lost (simulated)';

/**
 * An in-memory file system that knows what fsync made durable, for the raw
 * sink's power-loss tests: unlike SIGKILL, which keeps the page cache, a
 * crash here drops everything not yet synced. It counts mutating operations;
 * at `crashAtOp` it takes the surviving image and fails every later call.
 */
export class PowerLossFs implements SegmentFs {
  private readonly dirs = new Map<string, Directory>();
  private ops = 0;
  private image: DiskImage | null = null;
  private readonly random: () => number;

  constructor(
    private readonly options: PowerLossOptions = {},
    from?: DiskImage,
  ) {
    this.random = mulberry32(options.seed ?? 1);
    for (const [dir, entries] of from ?? []) {
      const d = this.directory(dir);
      for (const [name, bytes] of entries) {
        const inode: Inode = { data: bytes.slice(), synced: bytes.slice(), pending: [] };
        d.live.set(name, inode);
        d.durable.set(name, inode);
      }
    }
  }

  /** Mutating operations so far (the crash points a run offers). */
  get operations(): number {
    return this.ops;
  }

  get crashed(): boolean {
    return this.image !== null;
  }

  /** Cuts the power now (if it has not gone yet) and returns what survived. */
  crash(): DiskImage {
    this.image ??= this.survivors();
    return this.image;
  }

  async ensureDir(dir: string): Promise<void> {
    this.alive();
    // The real implementation syncs every created parent: durable at once.
    this.directory(dir);
    return Promise.resolve();
  }

  async list(dir: string): Promise<string[]> {
    this.alive();
    return Promise.resolve([...this.existing(dir).live.keys()]);
  }

  async readFile(path: string): Promise<Uint8Array> {
    this.alive();
    const inode = this.existing(dirname(path)).live.get(basename(path));
    if (inode === undefined) throw enoent(path);
    return Promise.resolve(inode.data.slice());
  }

  async size(path: string): Promise<number | null> {
    this.alive();
    const inode = this.existing(dirname(path)).live.get(basename(path));
    return Promise.resolve(inode?.data.byteLength ?? null);
  }

  async create(path: string): Promise<SegmentFile> {
    this.step();
    const d = this.existing(dirname(path));
    const name = basename(path);
    if (d.live.has(name)) throw Object.assign(new Error(`EEXIST: ${path}`), { code: 'EEXIST' });
    return Promise.resolve(this.fileOf(this.link(d, name), name));
  }

  async append(path: string): Promise<SegmentFile> {
    this.step();
    const d = this.existing(dirname(path));
    const name = basename(path);
    return Promise.resolve(this.fileOf(d.live.get(name) ?? this.link(d, name), name));
  }

  async truncate(path: string, length: number): Promise<void> {
    this.step();
    const inode = this.existing(dirname(path)).live.get(basename(path));
    if (inode === undefined) throw enoent(path);
    // The real truncate syncs the file before it returns (segment-fs.ts).
    inode.data = inode.data.slice(0, length);
    inode.synced = inode.data.slice();
    inode.pending = [];
    return Promise.resolve();
  }

  async rename(from: string, to: string): Promise<void> {
    this.step();
    const d = this.existing(dirname(from));
    const inode = d.live.get(basename(from));
    if (inode === undefined) throw enoent(from);
    d.live.delete(basename(from));
    if (dirname(from) !== dirname(to)) {
      // Into another directory: an unlink here and a link there, each durable
      // with its own directory's fsync.
      const into = this.existing(dirname(to));
      into.live.set(basename(to), inode);
      d.pending.push({ kind: 'unlink', name: basename(from) });
      into.pending.push({ kind: 'link', name: basename(to), inode });
      return Promise.resolve();
    }
    d.live.set(basename(to), inode);
    d.pending.push({ kind: 'rename', from: basename(from), to: basename(to), inode });
    return Promise.resolve();
  }

  async syncDir(dir: string): Promise<void> {
    this.step();
    const d = this.existing(dir);
    if (this.options.skip?.syncDir !== true) {
      d.durable = new Map(d.live);
      d.pending = [];
    }
    return Promise.resolve();
  }

  async remove(path: string): Promise<void> {
    this.step();
    const d = this.existing(dirname(path));
    const name = basename(path);
    if (d.live.delete(name)) d.pending.push({ kind: 'unlink', name });
    return Promise.resolve();
  }

  private link(d: Directory, name: string): Inode {
    const inode: Inode = { data: new Uint8Array(0), synced: new Uint8Array(0), pending: [] };
    d.live.set(name, inode);
    d.pending.push({ kind: 'link', name, inode });
    return inode;
  }

  /** A file open for writing at its end, as both create and append use it. */
  private fileOf(inode: Inode, name: string): SegmentFile {
    return {
      write: (chunks) => {
        this.step();
        for (const chunk of chunks) {
          const offset = inode.data.byteLength;
          inode.data = concat(inode.data, chunk);
          inode.pending.push({ offset, bytes: chunk.slice() });
        }
        return Promise.resolve();
      },
      sync: () => {
        this.step();
        if (this.options.skip?.sync?.(name) !== true) {
          inode.synced = inode.data.slice();
          inode.pending = [];
        }
        return Promise.resolve();
      },
      close: () => {
        this.step();
        return Promise.resolve();
      },
    };
  }

  private step(): void {
    this.alive();
    this.ops += 1;
    if (this.ops === this.options.crashAtOp) {
      this.crash();
      this.alive();
    }
  }

  private alive(): void {
    if (this.image !== null) throw Object.assign(new Error(POWER_LOST), { code: 'EIO' });
  }

  private directory(dir: string): Directory {
    let d = this.dirs.get(dir);
    if (d === undefined) {
      d = { live: new Map(), durable: new Map(), pending: [] };
      this.dirs.set(dir, d);
    }
    return d;
  }

  private existing(dir: string): Directory {
    const d = this.dirs.get(dir);
    if (d === undefined) throw enoent(dir);
    return d;
  }

  private survivors(): DiskImage {
    const subset = this.options.survival !== undefined && this.options.survival !== 'synced-only';
    const image: DiskImage = new Map();
    for (const [path, d] of this.dirs) {
      const entries = new Map(d.durable);
      if (subset) {
        for (const op of d.pending) {
          if (this.random() < 0.5) continue;
          if (op.kind === 'link') entries.set(op.name, op.inode);
          else if (op.kind === 'unlink') entries.delete(op.name);
          else {
            entries.delete(op.from);
            entries.set(op.to, op.inode);
          }
        }
      }
      const files = new Map<string, Uint8Array>();
      for (const [name, inode] of entries) files.set(name, this.contentOf(inode, subset));
      image.set(path, files);
    }
    return image;
  }

  /**
   * The synced bytes, then (under `any-subset`) a random subset of the
   * pending writes in issue order: a skipped write leaves a
   * hole of zeros if a later one lands beyond it, and the last kept write
   * may be torn.
   */
  private contentOf(inode: Inode, subset: boolean): Uint8Array {
    let out = inode.synced.slice();
    if (!subset) return out;
    if (this.options.survival === 'torn-sectors') return this.sectorsOf(inode, out);
    const kept = inode.pending.filter(() => this.random() >= 0.5);
    kept.forEach((op, i) => {
      const bytes =
        i === kept.length - 1
          ? op.bytes.subarray(0, Math.floor(this.random() * (op.bytes.byteLength + 1)))
          : op.bytes;
      const end = Math.max(out.byteLength, op.offset + bytes.byteLength);
      if (end > out.byteLength) {
        const grown = new Uint8Array(end);
        grown.set(out);
        out = grown;
      }
      out.set(bytes, op.offset);
    });
    return out;
  }

  /**
   * The synced bytes, then each pending write's sectors, each kept or not at
   * random (a later write's sector over an earlier one's, as issued): the
   * file is as long as the furthest sector kept, what no kept sector covers
   * beyond the synced bytes reads as zeros.
   */
  private sectorsOf(inode: Inode, synced: Uint8Array): Uint8Array {
    const pieces: PendingWrite[] = [];
    for (const op of inode.pending) {
      for (let at = op.offset; at < op.offset + op.bytes.byteLength;) {
        const next = Math.min(
          (Math.floor(at / SECTOR) + 1) * SECTOR,
          op.offset + op.bytes.byteLength,
        );
        if (this.random() >= 0.5) {
          pieces.push({ offset: at, bytes: op.bytes.subarray(at - op.offset, next - op.offset) });
        }
        at = next;
      }
    }
    const end = pieces.reduce(
      (n, p) => Math.max(n, p.offset + p.bytes.byteLength),
      synced.byteLength,
    );
    const out = new Uint8Array(end);
    out.set(synced);
    for (const p of pieces) out.set(p.bytes, p.offset);
    return out;
  }
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.byteLength + b.byteLength);
  out.set(a);
  out.set(b, a.byteLength);
  return out;
}

function enoent(path: string): Error {
  return Object.assign(new Error(`ENOENT: no such file or directory, ${path}`), { code: 'ENOENT' });
}

/** A small seeded generator: the same seed gives the same survivors. */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

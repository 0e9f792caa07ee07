import { basename } from 'node:path';
import type { SegmentFile, SegmentFs } from '../src/index.js';

/** What a crash keeps when it keeps something unsynced: seeded, so a run repeats. */
export type Chooser = () => number;

/** An fsync the simulation may be told to skip, to show the design needs it. */
export type SkippedSync = 'segment-sync' | 'dir-sync' | 'manifest-sync' | null;

interface Inode {
  /** What the process sees. */
  data: Buffer;
  /** What an fsync made durable. */
  synced: Buffer;
}

export class CrashError extends Error {
  constructor() {
    super('simulated power loss');
  }
}

/**
 * A file system in memory that knows what is durable: file contents only
 * through an fsync of the file, directory entries (create, rename, remove)
 * only through an fsync of the directory. Every mutating call is numbered;
 * `crashAt` makes call n and every later one fail as a power loss would, and
 * `afterCrash()` is the machine after reboot: each file holds what was
 * synced plus, by the chooser, a torn prefix of what was not; the directory
 * holds its synced entries plus, by the chooser, some of the unsynced
 * operations (in any order the chooser picks, by applying a random subset).
 * One flat directory, as raw uses.
 */
export class SimFs implements SegmentFs {
  private entries = new Map<string, Inode>();
  private durableEntries = new Map<string, Inode>();
  /** Directory operations since the last directory fsync. */
  private pendingDirOps: ((m: Map<string, Inode>) => void)[] = [];
  ops = 0;
  crashed = false;

  constructor(
    private readonly crashAt = Number.POSITIVE_INFINITY,
    private readonly skip: SkippedSync = null,
  ) {}

  /** The machine after the power came back: a fresh fs from what survived. */
  afterCrash(choose: Chooser): SimFs {
    const next = new SimFs();
    const dir = new Map(this.durableEntries);
    for (const op of this.pendingDirOps) if (choose() < 0.5) op(dir);
    const survived = new Map<Inode, Inode>();
    for (const [name, inode] of dir) {
      let kept = survived.get(inode);
      if (kept === undefined) {
        const extra = inode.data.byteLength - inode.synced.byteLength;
        const grew =
          extra > 0 && inode.data.subarray(0, inode.synced.byteLength).equals(inode.synced);
        const tail = grew ? Math.floor(choose() * (extra + 1)) : 0;
        const data = Buffer.from(inode.data.subarray(0, inode.synced.byteLength + tail));
        kept = { data, synced: Buffer.from(data) };
        survived.set(inode, kept);
      }
      dir.set(name, kept);
    }
    next.entries = new Map(dir);
    next.durableEntries = new Map(dir);
    return next;
  }

  private step(): void {
    if (this.crashed) throw new CrashError();
    this.ops++;
    if (this.ops >= this.crashAt) {
      this.crashed = true;
      throw new CrashError();
    }
  }

  private dirOp(op: (m: Map<string, Inode>) => void): void {
    op(this.entries);
    this.pendingDirOps.push(op);
  }

  ensureDir = async () => undefined;
  list = async () => [...this.entries.keys()];

  readFile = async (path: string) => {
    const inode = this.entries.get(basename(path));
    if (inode === undefined) throw Object.assign(new Error(`ENOENT ${path}`), { code: 'ENOENT' });
    return Buffer.from(inode.data);
  };

  size = async (path: string) => this.entries.get(basename(path))?.data.byteLength ?? null;

  private fileOf(inode: Inode, kind: 'segment' | 'manifest'): SegmentFile {
    return {
      write: async (chunks) => {
        this.step();
        inode.data = Buffer.concat([inode.data, ...chunks]);
      },
      sync: async () => {
        this.step();
        const skipped = kind === 'segment' ? 'segment-sync' : 'manifest-sync';
        if (this.skip !== skipped) inode.synced = Buffer.from(inode.data);
      },
      close: async () => this.step(),
    };
  }

  create = async (path: string) => {
    this.step();
    const name = basename(path);
    if (this.entries.has(name))
      throw Object.assign(new Error(`EEXIST ${path}`), { code: 'EEXIST' });
    const inode: Inode = { data: Buffer.alloc(0), synced: Buffer.alloc(0) };
    this.dirOp((m) => m.set(name, inode));
    return this.fileOf(inode, name.startsWith('.raw.manifest') ? 'manifest' : 'segment');
  };

  append = async (path: string) => {
    this.step();
    const name = basename(path);
    let inode = this.entries.get(name);
    if (inode === undefined) {
      const created: Inode = { data: Buffer.alloc(0), synced: Buffer.alloc(0) };
      this.dirOp((m) => m.set(name, created));
      inode = created;
    }
    return this.fileOf(inode, 'manifest');
  };

  truncate = async (path: string, length: number) => {
    this.step();
    const inode = this.entries.get(basename(path));
    if (inode === undefined) throw new Error(`ENOENT ${path}`);
    inode.data = Buffer.from(inode.data.subarray(0, length));
    inode.synced = Buffer.from(inode.data);
  };

  rename = async (from: string, to: string) => {
    this.step();
    const a = basename(from);
    const b = basename(to);
    if (!this.entries.has(a)) throw new Error(`ENOENT ${from}`);
    this.dirOp((m) => {
      const inode = m.get(a);
      if (inode === undefined) return;
      m.set(b, inode);
      m.delete(a);
    });
  };

  syncDir = async () => {
    this.step();
    if (this.skip === 'dir-sync') return;
    this.durableEntries = new Map(this.entries);
    this.pendingDirOps = [];
  };

  remove = async (path: string) => {
    this.step();
    const name = basename(path);
    this.dirOp((m) => m.delete(name));
  };
}

/** A seeded uniform [0, 1) chooser (mulberry32). */
export function seeded(seed: number): Chooser {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

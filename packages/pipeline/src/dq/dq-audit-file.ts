import { createHash } from 'node:crypto';
import { mkdir, open, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { PipelineError } from '../errors.js';
import type { DqCheckCounts } from '../topology.js';
import {
  checkEntry,
  DqAuditLedger,
  type DqAuditEntry,
  type DqAuditFilter,
  type DqAuditStore,
} from './dq-audit-store.js';

const FORMAT = 'twg-dq-audit';
const VERSION = 1;
const HEADER = lineOf({ format: FORMAT, version: VERSION });

export interface FileDqAuditOptions {
  /** The trail's file; created (with its directory) when missing. */
  readonly path: string;
  readonly log?: (line: string) => void;
  /** Opens the file (node's `open` by default): a test passes one whose handle fails on cue. */
  readonly openFile?: (path: string, flags: 'r+' | 'wx+') => Promise<FileHandle>;
}

/** What open found: windows counted, and whether a torn last line was cut. */
export interface FileDqAuditOpened {
  readonly lines: number;
  readonly tornBytes: number;
}

/**
 * The dq-audit trail as an append-only file of checksummed JSON lines, one
 * per window (ADR 0026). Each line is `<8 hex of the JSON's sha256> <JSON>\n`;
 * the first is the header `{"format":"twg-dq-audit","version":1}`, then one
 * `{"sink","topic","partition","start","end","check","passed","failed"}` per
 * entry. `record` appends its new entries in one write and fsyncs before it
 * resolves, one call at a time, so only the last line can be torn by a
 * crash: open cuts a last line without its newline or failing its checksum
 * (nothing that resolved is lost with it) and refuses any other bad line as
 * damage. Open replays every line through the ledger, so entries a replay
 * repeated are counted once, and `read` and `totals` answer from memory.
 *
 * One writer per file: two processes appending to one file would tear each
 * other's lines.
 */
export class FileDqAudit implements DqAuditStore {
  private readonly ledger = new DqAuditLedger();
  /** Bytes of whole, synced lines: where the next append goes. */
  private size = 0;
  private chain: Promise<void> = Promise.resolve();
  private broken: Error | null = null;
  private closed = false;

  private constructor(
    private readonly path: string,
    private readonly file: FileHandle,
    readonly opened: FileDqAuditOpened,
  ) {}

  static async open(options: FileDqAuditOptions): Promise<FileDqAudit> {
    const { path } = options;
    const openFile = options.openFile ?? open;
    await mkdir(dirname(path), { recursive: true });
    let file: FileHandle;
    let created = false;
    try {
      file = await openFile(path, 'r+');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      file = await openFile(path, 'wx+');
      created = true;
    }
    try {
      const bytes = await file.readFile();
      const parsed = parse(bytes, path);
      const store = new FileDqAudit(path, file, {
        lines: parsed.entries.length,
        tornBytes: bytes.byteLength - parsed.sound,
      });
      for (const e of parsed.entries) store.ledger.apply(e);
      store.size = parsed.sound;
      if (store.opened.tornBytes > 0) {
        await file.truncate(parsed.sound);
        await file.sync();
        options.log?.(
          `dq-audit ${path}: cut a torn last line (${store.opened.tornBytes} bytes, never acknowledged)`,
        );
      }
      if (store.size === 0) {
        await file.write(HEADER, 0, HEADER.byteLength, 0);
        await file.sync();
        store.size = HEADER.byteLength;
      }
      if (created) await syncDirectory(dirname(path));
      return store;
    } catch (error) {
      await file.close();
      throw error;
    }
  }

  /** Appends the entries that change the count, fsynced before it resolves. */
  record(entries: readonly DqAuditEntry[]): Promise<void> {
    const run = this.chain.then(() => this.append(entries));
    this.chain = run.catch(() => undefined);
    return run;
  }

  async read(filter?: DqAuditFilter): Promise<readonly DqAuditEntry[]> {
    this.usable();
    return this.ledger.read(filter);
  }

  async totals(sink: string): Promise<Readonly<Record<string, DqCheckCounts>>> {
    this.usable();
    return this.ledger.totals(sink);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.chain;
    await this.file.close();
  }

  private async append(entries: readonly DqAuditEntry[]): Promise<void> {
    this.usable();
    entries.forEach(checkEntry);
    // Only what counts: a span counted before is not written again, so a
    // replay does not grow the file. The ledger takes the rest in order
    // after the sync, as a reopen replaying the lines would.
    const fresh = entries.filter((e) => {
      const verdict = this.ledger.judge(e);
      return verdict === 'added' || verdict === 'superseded';
    });
    if (fresh.length === 0) return;
    const bytes = Buffer.concat(fresh.map((e) => lineOf(toLine(e))));
    try {
      let at = 0;
      while (at < bytes.byteLength) {
        const { bytesWritten } = await this.file.write(
          bytes,
          at,
          bytes.byteLength - at,
          this.size + at,
        );
        at += bytesWritten;
      }
      await this.file.sync();
    } catch (error) {
      await this.cutBack(error);
      throw error;
    }
    this.size += bytes.byteLength;
    for (const e of fresh) this.ledger.apply(e);
  }

  /**
   * After a failed write or sync, the file is cut back to its synced lines,
   * so the retry appends after whole lines (and rewrites pages a failed
   * fsync may have dropped). If even that fails, the store refuses from
   * then on: a later append could leave a damaged line in the middle.
   */
  private async cutBack(cause: unknown): Promise<void> {
    try {
      await this.file.truncate(this.size);
      await this.file.sync();
    } catch {
      this.broken = new PipelineError(
        'TWG_PIPELINE_STATE',
        `dq-audit ${this.path}: a failed append could not be cut back; reopen the store`,
        cause,
      );
    }
  }

  private usable(): void {
    if (this.broken !== null) throw this.broken;
    if (this.closed) {
      throw new PipelineError('TWG_PIPELINE_STATE', `dq-audit ${this.path} is closed`);
    }
  }
}

interface Parsed {
  readonly entries: readonly DqAuditEntry[];
  /** Bytes of whole, checked lines. */
  readonly sound: number;
}

/** Reads the file's lines; a bad last line is torn (left beyond `sound`), any other is damage. */
function parse(bytes: Buffer, path: string): Parsed {
  const entries: DqAuditEntry[] = [];
  let at = 0;
  let line = 0;
  while (at < bytes.byteLength) {
    const end = bytes.indexOf(0x0a, at);
    line++;
    if (end === -1) {
      // A last line without its newline: torn. A header is torn only if it
      // is a prefix of ours, so a foreign file is never cut.
      if (line === 1 && !HEADER.subarray(0, bytes.byteLength).equals(bytes)) {
        damaged(path, 1, `is not a ${FORMAT} header`);
      }
      break;
    }
    try {
      const body = checked(bytes.subarray(at, end), path, line);
      if (line === 1) header(body, path);
      else entries.push(entryOf(body, path, line));
    } catch (error) {
      if (end + 1 === bytes.byteLength && line > 1) break; // a torn whole last line
      throw error;
    }
    at = end + 1;
  }
  return { entries, sound: at };
}

function checked(line: Buffer, path: string, n: number): unknown {
  const json = line.subarray(9);
  if (line[8] !== 0x20 || digest(json) !== line.subarray(0, 8).toString()) {
    return damaged(path, n, 'fails its checksum');
  }
  try {
    return JSON.parse(json.toString()) as unknown;
  } catch (cause) {
    return damaged(path, n, `is not JSON: ${String(cause)}`);
  }
}

function header(body: unknown, path: string): void {
  const h = body as { format?: unknown; version?: unknown };
  if (h.format !== FORMAT) damaged(path, 1, `is not a ${FORMAT} header`);
  if (h.version !== VERSION) {
    damaged(path, 1, `has version ${String(h.version)}; this build reads ${VERSION}`);
  }
}

function entryOf(body: unknown, path: string, n: number): DqAuditEntry {
  const b = body as Record<string, unknown>;
  const text = (k: string): string =>
    typeof b[k] === 'string' ? b[k] : damaged(path, n, `has no string ${k}`);
  const int = (k: string): number =>
    typeof b[k] === 'number' ? b[k] : damaged(path, n, `has no number ${k}`);
  const entry = {
    sink: text('sink'),
    span: {
      topic: text('topic'),
      partition: int('partition'),
      start: int('start'),
      end: int('end'),
    },
    check: text('check'),
    passed: int('passed'),
    failed: int('failed'),
  };
  try {
    return checkEntry(entry);
  } catch (error) {
    return damaged(path, n, error instanceof Error ? error.message : String(error));
  }
}

function toLine(e: DqAuditEntry): Record<string, string | number> {
  const { topic, partition, start, end } = e.span;
  return {
    sink: e.sink,
    topic,
    partition,
    start,
    end,
    check: e.check,
    passed: e.passed,
    failed: e.failed,
  };
}

function lineOf(value: unknown): Buffer {
  const json = Buffer.from(JSON.stringify(value));
  return Buffer.concat([Buffer.from(`${digest(json)} `), json, Buffer.from('\n')]);
}

function digest(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex').slice(0, 8);
}

function damaged(path: string, line: number, why: string): never {
  throw new PipelineError('TWG_PIPELINE_DQ_AUDIT_CORRUPT', `dq-audit ${path}: line ${line} ${why}`);
}

async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

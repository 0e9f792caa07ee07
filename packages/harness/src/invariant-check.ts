import { join } from 'node:path';
import type pg from 'pg';
import {
  overclaimedRanges,
  rawCoverageHoles,
  readCoverageViews,
  secondaryBacklog,
} from './coverage-audit.js';
import type { HarnessSource, SourcePositions } from './harness-source.js';
import { RAW } from './harness-topology.js';
import { readRaw, type RawContents } from './raw-audit.js';
import { readTable, tableOffsets, type TableRow } from './table-audit.js';
import { heldByZerobus, readZerobus, type ZerobusContents } from './zerobus-audit.js';
import { ZEROBUS } from './zerobus-topology.js';

/** What one check read, in the order it read it. */
export interface Snapshot {
  /** What the broker considered acknowledged, read first. */
  readonly positions: SourcePositions;
  /** Per partition: see rawCoverageHoles. */
  readonly rawCoverageHoles: readonly number[];
  readonly raw: RawContents;
  readonly rows: readonly TableRow[];
  /** What the fake Zerobus server acknowledged (empty when its log could not be read). */
  readonly zerobus: ZerobusContents;
}

export interface InvariantCheckOptions {
  readonly topic: HarnessSource;
  readonly pool: pg.Pool;
  readonly sinkSchema: string;
  readonly coverageSchema: string;
  readonly partitions: number;
  readonly log: (line: string) => void;
}

/**
 * The invariants that must hold at every moment, checked after every kill
 * while no child is alive, with what they found accumulated over the run.
 */
export class InvariantCheck {
  /** Checks at which an acknowledged position was one raw lacks, per partition. */
  positionLeads = 0;
  /** Distinct coverage ranges that claimed an offset their sink lacked. */
  readonly overclaims = new Set<string>();
  /** Distinct failures to read the fake Zerobus server's log. */
  readonly zerobusErrors = new Set<string>();
  /** Distinct raw read failures. */
  readonly rawErrors = new Set<string>();
  /** The most offsets raw's recorded coverage lagged raw by (below the committed positions). */
  rawCoverageLag = 0;
  /** Offsets raw's recorded coverage holds that the secondary's lacks, at the last check. */
  backlog = 0;

  constructor(private readonly o: InvariantCheckOptions) {}

  /**
   * The order of the reads matters: positions, then coverage claims, then
   * the sinks' contents. Anything a dead child's last request still lands
   * in between can only make the later reads hold more, so it can hide
   * nothing and invent nothing.
   */
  async check(label: string, dir: string): Promise<Snapshot> {
    const { log, partitions, topic } = this.o;
    const positions = await topic.positions();
    const views = await readCoverageViews({
      pool: this.o.pool,
      coverageSchema: this.o.coverageSchema,
      sinkSchema: this.o.sinkSchema,
      localDir: join(dir, 'coverage'),
      topic: topic.topic,
    });
    const rows = await readTable(this.o.pool, this.o.sinkSchema);
    const zerobus = await readZerobus(dir).catch((error: unknown) => {
      const message = error instanceof Error ? error.message : String(error);
      if (!this.zerobusErrors.has(message)) log(`${label}: ZEROBUS READ FAILED: ${message}`);
      this.zerobusErrors.add(message);
      return { recordIds: new Set<string>(), payloadIds: new Set<string>(), batches: 0, rows: 0 };
    });
    const raw = await readRaw(join(dir, 'raw'), topic.topic, partitions);
    for (const lead of positions.leads(raw)) {
      this.positionLeads += 1;
      log(`${label}: POSITION LEADS RAW: ${lead}`);
    }
    const table = tableOffsets(rows, partitions);
    const inZerobus = heldByZerobus(raw, zerobus, topic);
    const claims = overclaimedRanges(
      views,
      (sink, p, o) => {
        if (sink === RAW) return raw.records[p]?.has(o) === true;
        if (sink === ZEROBUS) return inZerobus(p, o);
        return table[p]?.has(o) === true;
      },
      (p, start, end) => topic.offsetsIn(p, start, end),
    );
    for (const claim of claims) {
      if (!this.overclaims.has(claim)) log(`${label}: OVER-CLAIM: ${claim}`);
      this.overclaims.add(claim);
    }
    for (const error of raw.errors) {
      if (!this.rawErrors.has(error)) log(`${label}: RAW READ FAILED: ${error}`);
      this.rawErrors.add(error);
    }
    this.backlog = secondaryBacklog(views);
    const holes = rawCoverageHoles(views, (p, o) => positions.acknowledged(p, o), raw.records);
    // Lag, not loss, while raw holds them: recovery plans from what raw holds,
    // and the next pipeline to open merges it into the store (ADR 0012).
    const lagging = holes.reduce((x, y) => x + y, 0);
    this.rawCoverageLag = Math.max(this.rawCoverageLag, lagging);
    log(
      `  ${positions.summary}, raw holds [${raw.records.map((h) => h.size).join(', ')}], ` +
        `table ${rows.length} rows, zerobus ${zerobus.rows} rows in ${zerobus.batches} batches, secondary backlog ${this.backlog}, raw coverage lag ${lagging}`,
    );
    return { positions, rawCoverageHoles: holes, raw, rows, zerobus };
  }
}

import { HarnessError } from './errors.js';
import { HARNESS_SOURCES, type HarnessSourceKind } from './crash-args.js';
import { choiceFlag, intFlag, intListFlag, parseFlags, textFlag } from './flags.js';

export const PULSAR_TYPES = ['Shared', 'Failover'] as const;
export type PulsarType = (typeof PULSAR_TYPES)[number];

export type ChildRole = 'both' | 'recovery';

/** What the parent tells one child process; services come from the THALWEG_* environment. */
export interface ChildArgs {
  readonly role: ChildRole;
  /** Holds `raw/` and `coverage/` (raw and the local coverage tier, colocated). */
  readonly dir: string;
  readonly source: HarnessSourceKind;
  readonly topic: string;
  /** The Kafka consumer group, or the Pulsar subscription. */
  readonly group: string;
  /** The Pulsar subscription's type (ignored for Kafka). */
  readonly pulsarType: PulsarType;
  readonly partitions: number;
  /** The schema of the secondary's table and of the sink's own (transactional) coverage. */
  readonly sinkSchema: string;
  /** The schema of the pipeline's durable coverage tier. */
  readonly coverageSchema: string;
  /** The pipeline's maxBatchRecords. */
  readonly batchRecords: number;
  /** The secondary lane's queue; a small one sheds under bursts, leaving gaps for recovery. */
  readonly laneBatches: number;
  readonly windowRecords: number;
  /**
   * The Zerobus secondary's k-th stream (the first, then each rebuild) dies
   * with an injected poison-stream failure at this durable wait (none: []).
   */
  readonly zerobusPoisonWaits: readonly number[];
}

const FLAGS = {
  role: 'value',
  dir: 'value',
  source: 'value',
  'pulsar-type': 'value',
  topic: 'value',
  group: 'value',
  partitions: 'value',
  'sink-schema': 'value',
  'coverage-schema': 'value',
  'batch-records': 'value',
  'lane-batches': 'value',
  'window-records': 'value',
  'zerobus-poison-waits': 'value',
} as const;

const WHERE = 'harness child';

export function parseChildArgs(argv: readonly string[]): ChildArgs {
  const flags = parseFlags(argv, FLAGS, WHERE);
  const role = textFlag(flags, 'role', WHERE);
  if (role !== 'both' && role !== 'recovery') {
    throw new HarnessError(
      'TWG_HARNESS_ARGS',
      `${WHERE}: --role must be both or recovery, got ${role}`,
    );
  }
  return {
    role,
    dir: textFlag(flags, 'dir', WHERE),
    source: choiceFlag(flags, 'source', HARNESS_SOURCES, WHERE),
    pulsarType: choiceFlag(flags, 'pulsar-type', PULSAR_TYPES, WHERE),
    topic: textFlag(flags, 'topic', WHERE),
    group: textFlag(flags, 'group', WHERE),
    partitions: intFlag(flags, 'partitions', 4, 1, 1024, WHERE),
    sinkSchema: textFlag(flags, 'sink-schema', WHERE),
    coverageSchema: textFlag(flags, 'coverage-schema', WHERE),
    batchRecords: intFlag(flags, 'batch-records', 500, 1, 100_000, WHERE),
    laneBatches: intFlag(flags, 'lane-batches', 256, 1, 100_000, WHERE),
    windowRecords: intFlag(flags, 'window-records', 500, 1, 1_000_000, WHERE),
    zerobusPoisonWaits: intListFlag(flags, 'zerobus-poison-waits', 1, 1_000_000, WHERE),
  };
}

export function childArgv(args: ChildArgs): string[] {
  return [
    '--role',
    args.role,
    '--dir',
    args.dir,
    '--source',
    args.source,
    '--pulsar-type',
    args.pulsarType,
    '--topic',
    args.topic,
    '--group',
    args.group,
    '--partitions',
    String(args.partitions),
    '--sink-schema',
    args.sinkSchema,
    '--coverage-schema',
    args.coverageSchema,
    '--batch-records',
    String(args.batchRecords),
    '--lane-batches',
    String(args.laneBatches),
    '--window-records',
    String(args.windowRecords),
    ...(args.zerobusPoisonWaits.length === 0
      ? []
      : ['--zerobus-poison-waits', args.zerobusPoisonWaits.join(',')]),
  ];
}

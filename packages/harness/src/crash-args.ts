import { choiceFlag, intFlag, parseFlags } from './flags.js';

export const HARNESS_SOURCES = ['kafka', 'pulsar'] as const;
export type HarnessSourceKind = (typeof HARNESS_SOURCES)[number];

export interface CrashArgs {
  /** The broker the topology reads: a Kafka consumer group or a Pulsar subscription. */
  readonly source: HarnessSourceKind;
  readonly kills: number;
  readonly records: number;
  readonly seed: number;
  readonly partitions: number;
  /** Leave the topic, schemas and directory in place for inspection. */
  readonly keep: boolean;
  /** Forward the children's logs to stderr. */
  readonly verbose: boolean;
}

const FLAGS = {
  source: 'value',
  kills: 'value',
  records: 'value',
  seed: 'value',
  partitions: 'value',
  keep: 'switch',
  verbose: 'switch',
} as const;

/** Records per kill by default: enough backlog that kills land mid-stream. */
export const RECORDS_PER_KILL = 400;
export const MIN_RECORDS = 5_000;
/**
 * Pulsar's: the subscription yields batches of a message or two (one
 * WebSocket frame a message), and every batch is a durable wait in each
 * sink, live and in recovery, so a run holds fewer records.
 */
export const PULSAR_RECORDS_PER_KILL = 100;
export const PULSAR_MIN_RECORDS = 1_000;

export function parseCrashArgs(argv: readonly string[], defaultSeed: number): CrashArgs {
  const where = 'harness:crash';
  const flags = parseFlags(argv, FLAGS, where);
  const kills = intFlag(flags, 'kills', 20, 1, 100_000, where);
  const source = choiceFlag(flags, 'source', HARNESS_SOURCES, where);
  return {
    source,
    kills,
    records: intFlag(
      flags,
      'records',
      source === 'pulsar'
        ? Math.max(PULSAR_MIN_RECORDS, PULSAR_RECORDS_PER_KILL * kills)
        : Math.max(MIN_RECORDS, RECORDS_PER_KILL * kills),
      1,
      100_000_000,
      where,
    ),
    seed: intFlag(flags, 'seed', defaultSeed, 0, 0xffffffff, where),
    partitions: intFlag(flags, 'partitions', 4, 1, 256, where),
    keep: flags.has('keep'),
    verbose: flags.has('verbose'),
  };
}

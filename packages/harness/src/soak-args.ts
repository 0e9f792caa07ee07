import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { intFlag, parseFlags } from './flags.js';
import type { SoakOptions } from './soak-run.js';

const WHERE = 'soak';

/** `--records N --partitions P --batch B --payload BYTES --sample-ms MS --stall-every N --stall-ms MS --budget-mb MB --gc --dir DIR --keep`. */
export function parseSoakArgs(argv: readonly string[]): Omit<SoakOptions, 'emit'> {
  const flags = parseFlags(
    argv,
    {
      records: 'value',
      partitions: 'value',
      batch: 'value',
      payload: 'value',
      'sample-ms': 'value',
      'stall-every': 'value',
      'stall-ms': 'value',
      'budget-mb': 'value',
      dir: 'value',
      keep: 'switch',
      gc: 'switch',
    },
    WHERE,
  );
  const dir = flags.get('dir');
  return {
    records: intFlag(flags, 'records', 20_000_000, 1000, 1e10, WHERE),
    partitions: intFlag(flags, 'partitions', 4, 1, 1024, WHERE),
    batchSize: intFlag(flags, 'batch', 1000, 1, 1_000_000, WHERE),
    payloadBytes: intFlag(flags, 'payload', 64, 0, 1_000_000, WHERE),
    sampleMs: intFlag(flags, 'sample-ms', 5000, 10, 3_600_000, WHERE),
    stallEvery: intFlag(flags, 'stall-every', 1000, 0, 1e9, WHERE),
    stallMs: intFlag(flags, 'stall-ms', 20, 0, 60_000, WHERE),
    budgetBytes: flags.has('budget-mb')
      ? intFlag(flags, 'budget-mb', 128, 1, 65_536, WHERE) * 1024 * 1024
      : undefined,
    dir:
      typeof dir === 'string' ? dir : join(tmpdir(), `thalweg-soak-${process.pid}-${Date.now()}`),
    keep: flags.get('keep') === true,
    collectGarbage: flags.get('gc') === true,
  };
}

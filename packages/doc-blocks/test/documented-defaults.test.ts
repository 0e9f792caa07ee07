import { writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import {
  backpressureConfigSchema,
  bottleneckDiagnosisConfigSchema,
  byteBudgetConfigSchema,
  expansionEstimatorConfigSchema,
  flowControlConfigSchema,
  quarantineLaneConfigSchema,
  sinkId,
  stuckDetectorConfigSchema,
} from '@thalweg/connector-core';
import {
  pipelineConfigSchema,
  recoveryConfigSchema,
  secondaryConfigSchema,
} from '@thalweg/pipeline';
import { rawSegmentSinkOptionsSchema } from '@thalweg/sink-files';
import ts from 'typescript';
import { beforeAll, describe, expect, it } from 'vitest';
import { checkDocumentedDefaults } from '../src/documented-defaults.js';
import { baseConfig, repoRoot, workDir } from './work-dir.js';

const core = (name: string) => join(repoRoot, 'packages/connector-core/src/flow-control', name);
const pipeline = (name: string) => join(repoRoot, 'packages/pipeline/src', name);
const rawRequired = {
  id: sinkId('raw'),
  dir: 'raw',
  cluster: 'c',
  confirm: { apply: async () => undefined },
};

// The documented config inputs, each with what its schema makes of `{}`.
const documented = [
  [pipeline('pipeline-config.ts'), 'PipelineConfigInput', pipelineConfigSchema.parse({})],
  [
    join(repoRoot, 'packages/connector-core/src/parts/parts.ts'),
    'LaneSettings',
    secondaryConfigSchema.parse({}),
  ],
  [pipeline('recovery/recovery-config.ts'), 'RecoveryConfigInput', recoveryConfigSchema.parse({})],
  [core('flow-control-config.ts'), 'FlowControlConfigInput', flowControlConfigSchema.parse({})],
  [core('backpressure-config.ts'), 'BackpressureConfigInput', backpressureConfigSchema.parse({})],
  [
    core('stuck-detector-config.ts'),
    'StuckDetectorConfigInput',
    stuckDetectorConfigSchema.parse({}),
  ],
  [core('byte-budget-config.ts'), 'ByteBudgetConfigInput', byteBudgetConfigSchema.parse({})],
  [
    core('expansion-estimator-config.ts'),
    'ExpansionEstimatorConfigInput',
    expansionEstimatorConfigSchema.parse({}),
  ],
  [
    core('bottleneck-diagnosis-config.ts'),
    'BottleneckDiagnosisConfigInput',
    bottleneckDiagnosisConfigSchema.parse({}),
  ],
  [
    core('quarantine-lane-config.ts'),
    'QuarantineLaneConfigInput',
    quarantineLaneConfigSchema.parse({}),
  ],
  [
    join(repoRoot, 'packages/sink-files/src/options.ts'),
    'RawSegmentSinkOptions',
    rawSegmentSinkOptionsSchema.parse(rawRequired),
  ],
] as const;

function programOf(files: readonly string[]): ts.Program {
  const parsed = ts.getParsedCommandLineOfConfigFile(baseConfig, undefined, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: () => undefined,
  });
  if (parsed === undefined) throw new Error(`could not read ${baseConfig}`);
  // Sources across packages, as the tests resolve them: no build needed.
  return ts.createProgram(files, {
    ...parsed.options,
    customConditions: ['@thalweg/source'],
    noEmit: true,
  });
}

describe("the config inputs' documented defaults", () => {
  let program: ts.Program;
  beforeAll(() => {
    program = programOf([...new Set(documented.map(([file]) => file))]);
  }, 60_000);

  it.each(documented.map(([file, name, defaults]) => ({ file, name, defaults })))(
    '$name states the defaults its schema applies',
    ({ file, name, defaults }) => {
      expect(checkDocumentedDefaults(program, file, name, defaults)).toEqual([]);
    },
  );
});

describe('a documented default that is not true', () => {
  it('is reported with the path of the key, at any depth', () => {
    const dir = workDir('documented-defaults');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, 'config.ts');
    writeFileSync(
      file,
      [
        'export interface Inner {',
        '  /** @defaultValue 5000 */ scanEveryMs?: number;',
        "  /** @defaultValue 'both' */ role?: string;",
        '  /** @defaultValue `${process.pid}` */ holder?: string;',
        '}',
        'export interface Outer {',
        '  /** Required: no default. */ id: string;',
        '  /** Nested. */ recovery?: Inner;',
        '  /** @defaultValue 67108864 (64 MiB) */ bytes?: number;',
        '  /** @defaultValue `{}` */ secondaries?: Record<string, number>;',
        '  undocumented?: boolean;',
        '}',
      ].join('\n'),
    );
    const check = (defaults: unknown) =>
      checkDocumentedDefaults(programOf([file]), file, 'Outer', defaults);
    const right = {
      id: 'x',
      recovery: { scanEveryMs: 5000, role: 'both' },
      bytes: 67108864,
      secondaries: {},
      undocumented: false,
    };
    expect(check(right)).toEqual([
      "Outer.undocumented: no @defaultValue (the schema's default is false)",
    ]);
    expect(
      check({ ...right, recovery: { scanEveryMs: 6000, role: 'ingest', holder: 'h' }, bytes: 1 }),
    ).toEqual([
      "Outer.recovery.scanEveryMs: documented 5000, but the schema's default is 6000",
      "Outer.recovery.role: documented 'both', but the schema's default is \"ingest\"",
      'Outer.recovery.holder: documented as computed (`${process.pid}`), but the schema defaults it to "h"',
      "Outer.bytes: documented 67108864 (64 MiB), but the schema's default is 1",
      "Outer.undocumented: no @defaultValue (the schema's default is false)",
    ]);
  });
});

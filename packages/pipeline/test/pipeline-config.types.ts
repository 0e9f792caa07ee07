// Type tests, compiled by tsc -b (not a vitest file): the config inputs are
// written out as interfaces so their TSDoc reaches the .d.ts (a zod-inferred
// type carries none), and the schema stays the validator. tsc fails the moment
// an interface and its schema disagree on a key, a type, or whether a key is
// optional, at any depth (flow control's inputs are checked the same way in
// connector-core).
import { agree, type Equals } from '@thalweg/test-services';
import type { z } from 'zod';
import type { dedupConfigSchema } from '../src/dedup/dedup-config.js';
import type {
  DedupConfigInput,
  PipelineConfigInput,
  pipelineConfigSchema,
  RecoveryConfigInput,
  recoveryConfigSchema,
  SecondaryConfigInput,
  secondaryConfigSchema,
} from '../src/index.js';

type Pipeline = z.input<typeof pipelineConfigSchema>;

agree<Equals<PipelineConfigInput, Pipeline>>();
agree<Equals<SecondaryConfigInput, z.input<typeof secondaryConfigSchema>>>();
agree<Equals<RecoveryConfigInput, z.input<typeof recoveryConfigSchema>>>();
agree<Equals<DedupConfigInput, z.input<typeof dedupConfigSchema>>>();

// A drift at depth is caught: a role the schema does not accept,
type WrongRole = Omit<PipelineConfigInput, 'recovery'> & {
  recovery?:
    | (Omit<RecoveryConfigInput, 'role'> & { role?: 'ingest' | 'both' | 'standby' | undefined })
    | undefined;
};
// @ts-expect-error the interface's `recovery.role` differs from the schema's
agree<Equals<WrongRole, Pipeline>>();
// and a default documented as optional that the interface makes required.
type RequiredScan = Omit<PipelineConfigInput, 'recovery'> & {
  recovery?: (RecoveryConfigInput & { scanEveryMs: number }) | undefined;
};
// @ts-expect-error the interface's `recovery.scanEveryMs` is required, the schema's is not
agree<Equals<RequiredScan, Pipeline>>();

import { describe, expectTypeOf, it } from 'vitest';
import type { z } from 'zod';
import type { ZerobusConfigInput, zerobusConfigSchema } from '../src/config.js';

type SchemaInput = z.input<typeof zerobusConfigSchema>;

describe('ZerobusConfigInput', () => {
  it('is the config schema input, key for key (spelled out so the .d.ts keeps each key’s doc)', () => {
    expectTypeOf<keyof ZerobusConfigInput>().toEqualTypeOf<keyof SchemaInput>();
    expectTypeOf<ZerobusConfigInput>().toExtend<SchemaInput>();
    expectTypeOf<SchemaInput>().toExtend<ZerobusConfigInput>();
    type Backoff = NonNullable<ZerobusConfigInput['retry']>;
    type SchemaBackoff = NonNullable<SchemaInput['retry']>;
    expectTypeOf<keyof Backoff>().toEqualTypeOf<keyof SchemaBackoff>();
  });
});

import { describe, expect, it } from 'vitest';
import {
  defaultLaneBytes,
  parsePipelineConfig,
  resolveLaneSettings,
  secondaryConfig,
} from '../src/pipeline-config.js';

const MiB = 1024 * 1024;

describe("a secondary lane's byte bound", () => {
  it('is a sixteenth of the memory limit when the part declares none, at most 64 MiB', () => {
    expect(secondaryConfig(parsePipelineConfig({}), 'zerobus').maxQueuedBytes).toBe(64 * MiB);
    const at512 = parsePipelineConfig({ memoryLimitBytes: 512 * MiB });
    expect(secondaryConfig(at512, 'zerobus')).toEqual({
      allowNonDurable: false,
      maxQueuedBatches: 256,
      maxQueuedBytes: 32 * MiB,
    });
    const at4g = parsePipelineConfig({ memoryLimitBytes: 4096 * MiB });
    expect(secondaryConfig(at4g, 'zerobus').maxQueuedBytes).toBe(64 * MiB);
    expect(defaultLaneBytes(8)).toBe(1);
  });

  it('is what the part declares, whatever the memory limit', () => {
    const config = parsePipelineConfig({
      memoryLimitBytes: 512 * MiB,
      secondaries: { postgres: { maxQueuedBytes: 100 * MiB, maxQueuedBatches: 8 } },
    });
    expect(secondaryConfig(config, 'postgres')).toMatchObject({
      maxQueuedBatches: 8,
      maxQueuedBytes: 100 * MiB,
    });
    expect(resolveLaneSettings({ maxQueuedBytes: 5 }, 16).maxQueuedBytes).toBe(5);
  });

  it('refuses a bound that is not a positive integer, naming it', () => {
    expect(() => parsePipelineConfig({ secondaries: { postgres: { maxQueuedBytes: 0 } } })).toThrow(
      /secondaries\.postgres\.maxQueuedBytes/,
    );
  });
});

import { describe, expect, it } from 'vitest';
import { parseBackpressureConfig } from '../../src/flow-control/backpressure-config.js';
import { classifyPressure } from '../../src/flow-control/pressure-reading.js';

const config = parseBackpressureConfig({});
const read = (memoryRatio: number, channelFill: number, consecutiveWriteFailures = 0) =>
  classifyPressure({ memoryRatio, channelFill, consecutiveWriteFailures }, config);

describe('classifyPressure', () => {
  it('places the thresholds: degraded inclusive, critical exclusive', () => {
    expect(read(0.79, 0.69)).toEqual({ level: 'clear' });
    expect(read(0.8, 0.1)).toEqual({ level: 'elevated', cause: 'memory' });
    expect(read(0.9, 0.1)).toEqual({ level: 'elevated', cause: 'memory' });
    expect(read(0.91, 0.1)).toEqual({ level: 'severe', cause: 'memory' });
    expect(read(0.1, 0.7)).toEqual({ level: 'elevated', cause: 'channels' });
    expect(read(0.1, 0.9)).toEqual({ level: 'elevated', cause: 'channels' });
    expect(read(0.1, 0.91)).toEqual({ level: 'severe', cause: 'channels' });
    expect(read(0.1, 0.1, 1)).toEqual({ level: 'elevated', cause: 'write-failures' });
  });

  it('reads high memory over near-empty channels as fragmentation (the working-set exception)', () => {
    expect(read(0.85, 0.049)).toEqual({ level: 'fragmentation' });
    expect(read(0.99, 0)).toEqual({ level: 'fragmentation' });
    expect(read(0.85, 0.05)).toEqual({ level: 'elevated', cause: 'memory' });
    expect(read(0.5, 0)).toEqual({ level: 'clear' });
  });

  it('never makes write failures critical', () => {
    expect(read(0.1, 0.1, 1_000)).toEqual({ level: 'elevated', cause: 'write-failures' });
  });

  it('returns shared readings, so classifying allocates nothing', () => {
    expect(read(0.85, 0.3)).toBe(read(0.86, 0.4));
  });
});

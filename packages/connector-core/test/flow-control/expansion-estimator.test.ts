import { describe, expect, it } from 'vitest';
import { ExpansionEstimator } from '../../src/flow-control/expansion-estimator.js';
import { parseExpansionEstimatorConfig } from '../../src/flow-control/expansion-estimator-config.js';

function estimator(input: object = {}) {
  return new ExpansionEstimator(
    parseExpansionEstimatorConfig({ seedRatio: 2, minSamples: 20, ...input }),
  );
}

describe('ExpansionEstimator', () => {
  it('uses the seed ratio until enough samples exist', () => {
    const e = estimator();
    for (let i = 0; i < 19; i++) e.observe(100, 500);
    expect(e.ratio).toBe(2);
    expect(e.cost(1_000)).toBe(2_000);
    e.observe(100, 500);
    expect(e.ratio).toBe(5);
    expect(e.cost(1_000)).toBe(5_000);
  });

  it('takes the p95, so a few highly compressible outliers do not inflate it', () => {
    const e = estimator();
    let sum = 0;
    for (let i = 0; i < 100; i++) {
      // 97 ordinary records around 3x, and 3 that expand 80x (long runs of one byte).
      const ratio = i % 33 === 32 ? 80 : 3 + (i % 5) * 0.1;
      sum += ratio;
      e.observe(1_000, ratio * 1_000);
    }
    expect(sum / 100).toBeGreaterThan(5);
    expect(e.ratio).toBeCloseTo(3.4, 5);
  });

  it('never estimates below the floor ratio', () => {
    const e = estimator({ seedRatio: 4, floorRatio: 4 });
    for (let i = 0; i < 100; i++) e.observe(1_000, 1_200);
    expect(e.ratio).toBe(4);
  });

  it('holds the seed until enough samples exist, then follows them down to the floor', () => {
    const e = estimator({ seedRatio: 4, floorRatio: 1, window: 20 });
    for (let i = 0; i < 19; i++) e.observe(1_000, 1_200);
    expect(e.ratio).toBe(4);
    e.observe(1_000, 1_200);
    expect(e.ratio).toBeCloseTo(1.2, 5);
    for (let i = 0; i < 64; i++) e.observe(1_000, 500);
    expect(e.ratio).toBe(1);
  });

  it('refuses a seed below the floor, naming the field', () => {
    expect(() => parseExpansionEstimatorConfig({ seedRatio: 1, floorRatio: 2 })).toThrow(
      /seedRatio/,
    );
  });

  it('follows the recent window as the workload shifts', () => {
    const e = estimator({ window: 50, refreshEvery: 10 });
    for (let i = 0; i < 50; i++) e.observe(100, 300);
    expect(e.ratio).toBe(3);
    for (let i = 0; i < 50; i++) e.observe(100, 900);
    expect(e.ratio).toBe(9);
  });

  it('costs at least one byte, so even empty records are accounted', () => {
    expect(estimator().cost(0)).toBe(1);
    expect(estimator().cost(3)).toBe(6);
  });

  it('refuses samples that are not sizes', () => {
    const e = estimator();
    expect(() => e.observe(0, 10)).toThrow(/TWG_BUDGET_AMOUNT_INVALID/);
    expect(() => e.observe(10, Number.NaN)).toThrow(/TWG_BUDGET_AMOUNT_INVALID/);
  });

  it('refuses to cost a size that is not one, instead of reserving a single byte', () => {
    const e = estimator();
    for (const bad of [Number.NaN, -10, Number.POSITIVE_INFINITY]) {
      expect(() => e.cost(bad)).toThrow(/TWG_BUDGET_AMOUNT_INVALID/);
    }
  });
});

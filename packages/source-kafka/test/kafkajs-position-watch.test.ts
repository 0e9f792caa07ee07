import { describe, expect, it } from 'vitest';
import { positionLost } from '../src/errors.js';
import { PositionWatch } from '../src/kafkajs-position-watch.js';

describe('PositionWatch', () => {
  const p = { topic: 't', partition: 1 };
  const q = { topic: 't', partition: 2 };

  it('marks a partition lost once, and only that partition', () => {
    const watch = new PositionWatch();
    expect(watch.isLost(p)).toBe(false);
    expect(watch.lose(p)).toBe(true);
    expect(watch.lose(p)).toBe(false);
    expect(watch.isLost(p)).toBe(true);
    expect(watch.isLost(q)).toBe(false);
  });

  it('takes no batch of a lost partition for delivery, and every batch of the others', () => {
    const watch = new PositionWatch();
    expect(watch.deliver(p, 4n)).toBe(true);
    watch.lose(p);
    expect(watch.deliver(p, 9n)).toBe(false);
    expect(watch.deliver(q, 9n)).toBe(true);
  });
});

describe('positionLost', () => {
  it('says unknown for what could not be asked', () => {
    const error = positionLost({ topic: 't', partition: 0 }, -1n, {
      logStartOffset: -1n,
      highWatermark: 12n,
    });
    expect(error.code).toBe('TWG_KAFKA_POSITION_LOST');
    expect(error.message).toContain(
      't/0: position unknown is outside the log (start unknown, end 12)',
    );
  });

  it('says the log ends before a position past its end', () => {
    const error = positionLost({ topic: 't', partition: 0 }, 50n, {
      logStartOffset: 0n,
      highWatermark: 10n,
    });
    expect(error.message).toContain(
      'position 50 is outside the log (start 0, end 10); the log ends before it',
    );
  });
});

import { describe, expect, it } from 'vitest';
import {
  ACCEPT_LOSS_WINDOW,
  assertPrimaryRaw,
  assertSecondary,
  assertSourceCanFeedRaw,
} from '../src/roles.js';
import { ConfigError } from '../src/errors.js';
import { sinkId } from '../src/sink-id.js';
import type { SinkDescriptor } from '../src/sink.js';
import type { Durability } from '../src/durability.js';
import type { SourceOrigin } from '../src/source.js';

const durableReadable: SinkDescriptor = {
  id: sinkId('raw'),
  kind: 'raw-segments',
  durability: { kind: 'flush-close' },
  recovery: { kind: 'readable' },
};

describe('role validation', () => {
  it('accepts a durable, readable sink as primary raw', () => {
    expect(() => assertPrimaryRaw(durableReadable)).not.toThrow();
  });

  it('refuses a sink that cannot confirm durability, naming the field', () => {
    const sink: SinkDescriptor = {
      ...durableReadable,
      id: sinkId('mem'),
      kind: 'memory',
      durability: { kind: 'none', reason: 'held in process memory' },
    };
    const run = () => assertPrimaryRaw(sink, 'topology.primaryRaw');
    expect(run).toThrow(ConfigError);
    expect(run).toThrow(/topology\.primaryRaw\.durability: sink "mem" \(memory\) cannot confirm/);
    try {
      run();
    } catch (e) {
      expect((e as ConfigError).code).toBe('TWG_ROLE_REFUSED');
      expect((e as ConfigError).path).toBe('topology.primaryRaw.durability');
    }
  });

  it('refuses a write-only sink as primary raw', () => {
    const sink: SinkDescriptor = { ...durableReadable, recovery: { kind: 'write-only' } };
    expect(() => assertPrimaryRaw(sink)).toThrow(/primaryRaw\.recovery: .* cannot be read back/);
  });

  it('lets a secondary give up durability only explicitly', () => {
    const sink: SinkDescriptor = {
      ...durableReadable,
      durability: { kind: 'none', reason: 'fire and forget' },
    };
    expect(() => assertSecondary(sink, { allowNonDurable: false }, 'secondaries[0]')).toThrow(
      /secondaries\[0\]\.durability: .*set allowNonDurable/,
    );
    expect(() => assertSecondary(sink, { allowNonDurable: true })).not.toThrow();
  });

  it('refuses a non-replayable, non-resumable source for raw', () => {
    expect(() =>
      assertSourceCanFeedRaw({
        regime: 'store-managed',
        origin: { kind: 'non-replayable', resumable: false },
      }),
    ).toThrow(/source\.origin: a non-replayable source/);
    expect(() =>
      assertSourceCanFeedRaw({
        regime: 'store-managed',
        origin: { kind: 'non-replayable', resumable: true },
      }),
    ).not.toThrow();
    const unresumable = {
      regime: 'store-managed',
      origin: { kind: 'non-replayable', resumable: false },
    } as const;
    expect(() =>
      assertSourceCanFeedRaw(unresumable, 'source', { acceptLossWindow: ACCEPT_LOSS_WINDOW }),
    ).not.toThrow();
    expect(() =>
      assertSourceCanFeedRaw(unresumable, 'source', {
        // @ts-expect-error: only the exact words accept the loss window
        acceptLossWindow: 'yes',
      }),
    ).toThrow(/acceptLossWindow: 'records-received-not-yet-durable-in-raw'/);
    expect(() =>
      assertSourceCanFeedRaw({ regime: 'broker-managed', origin: { kind: 'replayable' } }),
    ).not.toThrow();
  });

  it('refuses a durability kind it does not know, as from untyped configuration', () => {
    for (const kind of ['acks-on-send', 'None', 'flush_close']) {
      const sink: SinkDescriptor = {
        ...durableReadable,
        durability: { kind } as unknown as Durability,
      };
      expect(() => assertPrimaryRaw(sink)).toThrow(
        /primaryRaw\.durability: .*unknown durability kind/,
      );
      expect(() => assertSecondary(sink, { allowNonDurable: false })).toThrow(
        /secondaries\.durability/,
      );
    }
  });

  it('treats an origin kind it does not know as non-replayable', () => {
    const origin = { kind: 'non_replayable', resumable: false } as unknown as SourceOrigin;
    expect(() => assertSourceCanFeedRaw({ regime: 'store-managed', origin })).toThrow(
      /source\.origin: a non-replayable source/,
    );
    const resumable = { kind: 'stream', resumable: true } as unknown as SourceOrigin;
    expect(() => assertSourceCanFeedRaw({ regime: 'broker-managed', origin: resumable })).toThrow(
      /source\.regime/,
    );
  });
});

describe('isDurable', () => {
  it('counts only the known durable kinds', async () => {
    const { isDurable } = await import('../src/durability.js');
    expect(isDurable({ kind: 'flush-close' })).toBe(true);
    expect(isDurable({ kind: 'acks-on-send' } as never)).toBe(false);
    expect(isDurable({ kind: 'none', reason: 'memory' })).toBe(false);
  });
});

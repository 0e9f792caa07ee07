import {
  assertPrimaryRaw,
  assertSecondary,
  assertSourceCanFeedRaw,
  ConfigError,
  type SinkDescriptor,
  type Source,
} from '@thalweg/connector-core';
import { secondaryConfig, type PipelineConfig } from './pipeline-config.js';

/**
 * The topology rules, checked on the opened parts before anything is read
 * (ADR 0011). Each refusal names the path of the part and the reason:
 *
 * - the primary-raw sink confirms durability and can be read back by window;
 * - a non-replayable source feeds raw only if its producer can resume;
 * - a secondary gives up durability only when its config says so;
 * - sink ids are unique (coverage is keyed by them), and every per-secondary
 *   setting names a secondary that exists (a typo would silently fall back
 *   to the defaults).
 */
export function validateTopology(
  source: Source,
  raw: SinkDescriptor,
  secondaries: readonly SinkDescriptor[],
  config: PipelineConfig,
): void {
  assertSourceCanFeedRaw(source, 'source');
  // Sources can come from JavaScript the compiler never saw.
  const regime: unknown = (source as { readonly regime: unknown }).regime;
  if (regime !== 'broker-managed' && regime !== 'store-managed') {
    throw new ConfigError(
      'source.regime',
      `unknown position regime ${JSON.stringify(regime)}: the pipeline must know who stores the position`,
      'TWG_ROLE_REFUSED',
    );
  }
  assertPrimaryRaw(raw, 'primaryRaw');
  const seen = new Map<string, string>([[raw.id, 'primaryRaw']]);
  secondaries.forEach((descriptor, i) => {
    const path = `secondaries[${i}]`;
    const other = seen.get(descriptor.id);
    if (other !== undefined) {
      throw new ConfigError(
        `${path}.id`,
        `sink id "${descriptor.id}" is already used by ${other}; coverage is kept per sink id`,
      );
    }
    seen.set(descriptor.id, path);
    assertSecondary(descriptor, secondaryConfig(config, descriptor.id), path);
  });
  for (const id of Object.keys(config.secondaries)) {
    if (!secondaries.some((d) => d.id === id)) {
      throw new ConfigError(
        `config.secondaries.${id}`,
        `no secondary sink has id "${id}" (secondaries: ${secondaries.map((d) => d.id).join(', ') || 'none'})`,
      );
    }
  }
}

import {
  assertPrimaryRaw,
  assertSecondary,
  assertSourceCanFeedRaw,
  ConfigError,
  isDurable,
  type SinkDescriptor,
  type SinkId,
  type Source,
} from '@thalweg/connector-core';
import type { CoverageStore } from '@thalweg/offset-store';
import { secondaryConfig, type PipelineConfig } from './pipeline-config.js';

/**
 * The topology rules, checked on the opened parts before anything is read
 * (ADR 0011). Each refusal names the path of the part and the reason:
 *
 * - the primary-raw sink confirms durability and can be read back by window;
 * - a non-replayable source feeds raw only if its producer can resume, or
 *   the config accepts its loss window by name (`acceptLossWindow`);
 * - a secondary gives up durability only when its config says so;
 * - sink ids are unique (coverage is keyed by them), and every per-secondary
 *   setting names a secondary that exists (a typo would silently fall back
 *   to the defaults);
 * - raw records ids with the source's cluster: record ids (ADR 0003) hash
 *   the cluster, so a raw of another cluster would hold ids no replay of
 *   this source reproduces, and every secondary's dedup would miss;
 * - the coverage store keeps coverage for raw and every durable secondary:
 *   otherwise each of their coverage writes would be refused, every span
 *   would stay a gap, and recovery would replay all of it forever.
 */
export function validateTopology(
  source: Source,
  raw: { readonly descriptor: SinkDescriptor; readonly cluster: string },
  secondaries: readonly SinkDescriptor[],
  config: PipelineConfig,
  coverage: Pick<CoverageStore, 'knows'>,
): void {
  assertSourceCanFeedRaw(source, 'source', { acceptLossWindow: config.acceptLossWindow });
  // Sources can come from JavaScript the compiler never saw.
  const regime: unknown = (source as { readonly regime: unknown }).regime;
  if (regime !== 'broker-managed' && regime !== 'store-managed') {
    throw new ConfigError(
      'source.regime',
      `unknown position regime ${JSON.stringify(regime)}: the pipeline must know who stores the position`,
      'TWG_ROLE_REFUSED',
    );
  }
  assertPrimaryRaw(raw.descriptor, 'primaryRaw');
  if (raw.cluster !== source.cluster) {
    throw new ConfigError(
      'primaryRaw.cluster',
      `raw "${raw.descriptor.id}" records cluster ${JSON.stringify(raw.cluster)}, the source reads ` +
        `cluster ${JSON.stringify(source.cluster)}: record ids hash the cluster, so raw must be opened ` +
        "with the source's (pass source.cluster)",
    );
  }
  const seen = new Map<string, string>([[raw.descriptor.id, 'primaryRaw']]);
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
  const recorded: [SinkId, string][] = [
    [raw.descriptor.id, 'primaryRaw'],
    ...secondaries
      .map((d, i): [SinkDescriptor, string] => [d, `secondaries[${i}]`])
      // A non-durable secondary has no durable ack to record coverage after.
      .filter(([d]) => isDurable(d.durability))
      .map(([d, path]): [SinkId, string] => [d.id, path]),
  ];
  const unknown = recorded.filter(([id]) => !coverage.knows(id));
  const [first] = unknown;
  if (first !== undefined) {
    throw new ConfigError(
      `coverage.sinks`,
      `the coverage store does not keep coverage for ${unknown.map(([id, path]) => `"${id}" (${path})`).join(', ')}: ` +
        'open it with every durable sink id in its sinks list, or every coverage write for them is refused',
    );
  }
  for (const id of Object.keys(config.secondaries)) {
    if (!secondaries.some((d) => d.id === id)) {
      throw new ConfigError(
        `config.secondaries.${id}`,
        `no secondary sink has id "${id}" (secondaries: ${secondaries.map((d) => d.id).join(', ') || 'none'})`,
      );
    }
  }
}

import { DURABLE_KINDS, type Durability } from './durability.js';
import { ConfigError } from './errors.js';
import type { PrimaryRawDescriptor, SinkDescriptor } from './sink.js';
import type { SourceDescriptor } from './source.js';

/**
 * Only a kind known to be durable counts. Descriptors can come from
 * configuration or untyped JavaScript, and reading every kind but `none` as
 * durable would let a typo or an unknown kind advance the source position.
 */
function confirmsDurability(d: Durability): boolean {
  return DURABLE_KINDS.some((kind) => kind === d.kind);
}

function whyNotDurable(d: Durability): string {
  return d.kind === 'none' ? d.reason : `unknown durability kind ${JSON.stringify(d.kind)}`;
}

/**
 * Refuses a sink for the primary-raw role unless it can confirm durability and
 * can be read back for recovery. The types already require this of a
 * `ReplayableSink`; this check is the same rule for descriptors that arrive
 * from configuration or from JavaScript callers the compiler never saw.
 */
export function assertPrimaryRaw(
  descriptor: SinkDescriptor,
  path = 'primaryRaw',
): asserts descriptor is PrimaryRawDescriptor {
  if (!confirmsDurability(descriptor.durability)) {
    throw new ConfigError(
      `${path}.durability`,
      `sink "${descriptor.id}" (${descriptor.kind}) cannot confirm durable acknowledgement ` +
        `(${whyNotDurable(descriptor.durability)}); the primary-raw role advances the source position ` +
        `and needs server-ack, transaction-commit or flush-close durability`,
      'TWG_ROLE_REFUSED',
    );
  }
  if (descriptor.recovery.kind !== 'readable') {
    throw new ConfigError(
      `${path}.recovery`,
      `sink "${descriptor.id}" (${descriptor.kind}) cannot be read back by offset window` +
        (descriptor.recovery.reason === undefined ? '' : ` (${descriptor.recovery.reason})`) +
        `, so recovery could not replay secondaries from it; it cannot hold the primary-raw role`,
      'TWG_ROLE_REFUSED',
    );
  }
}

/**
 * A secondary may give up durability only by saying so: the descriptor's
 * `none` durability carries a reason, and the topology must opt in.
 */
export function assertSecondary(
  descriptor: SinkDescriptor,
  options: { readonly allowNonDurable: boolean },
  path = 'secondaries',
): void {
  if (!confirmsDurability(descriptor.durability) && !options.allowNonDurable) {
    throw new ConfigError(
      `${path}.durability`,
      `secondary "${descriptor.id}" (${descriptor.kind}) does not confirm durability ` +
        `(${whyNotDurable(descriptor.durability)}); set allowNonDurable to accept that its coverage ` +
        `is recorded on acceptance, not on durable acknowledgement`,
      'TWG_ROLE_REFUSED',
    );
  }
}

/**
 * What a user types to run a source whose producer can neither rewind nor
 * resume: the records it loses when the process dies, in words.
 */
export const ACCEPT_LOSS_WINDOW = 'records-received-not-yet-durable-in-raw';
export type LossWindowAcceptance = typeof ACCEPT_LOSS_WINDOW;

/**
 * A non-replayable origin feeding raw loses data outright if our position is
 * lost after the producer moved on, unless the producer can resume from a
 * token we kept. Such a topology is refused rather than allowed to look
 * sound, unless the user accepts the loss window by name
 * (`acceptLossWindow: 'records-received-not-yet-durable-in-raw'`): every
 * record received and not yet durable in raw when the process dies is gone.
 */
export function assertSourceCanFeedRaw(
  source: SourceDescriptor,
  path = 'source',
  options: { readonly acceptLossWindow?: LossWindowAcceptance | undefined } = {},
): void {
  const unresumable = source.origin.kind !== 'replayable' && !source.origin.resumable;
  if (unresumable && options.acceptLossWindow !== ACCEPT_LOSS_WINDOW) {
    throw new ConfigError(
      `${path}.origin`,
      'a non-replayable source whose producer cannot resume cannot feed the primary-raw role: ' +
        'a lost position after the producer moved on is lost data. To run it anyway, accept its ' +
        `loss window by name: config.acceptLossWindow: '${ACCEPT_LOSS_WINDOW}' (every record ` +
        'received and not yet durable in raw when the process dies is lost; the pipeline reports ' +
        'that count as source.lossWindowRecords)',
      'TWG_ROLE_REFUSED',
    );
  }
  if (source.origin.kind !== 'replayable' && source.regime !== 'store-managed') {
    throw new ConfigError(
      `${path}.regime`,
      'a non-replayable source must be store-managed: its position (a resumption token, or where its stream stood) lives in the offset store',
      'TWG_ROLE_REFUSED',
    );
  }
}

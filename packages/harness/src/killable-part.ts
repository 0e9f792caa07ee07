import type { RawPart, SecondaryPart } from '@thalweg/connector-core';
import type { Tripwire } from './crash-point.js';
import { killableConfirm, killableRaw, killableSecondary } from './killable-parts.js';

/*
 * The declared parts, with the kill points of killable-parts.ts placed at
 * their boundaries: the topology opens the part as a user's would, and the
 * wrapper only wraps what it hands back and the confirm target it is given.
 */

/** Raw, dying inside the n-th submit (raw-submit) or before the n-th confirmation (raw-acked). */
export function killableRawPart<St>(part: RawPart<St>, wire: Tripwire): RawPart<St> {
  return {
    ...part,
    open: async (context) => {
      const confirm = killableConfirm(context.confirm, wire, 'raw-acked');
      const opened = await part.open({ ...context, confirm });
      return { ...opened, sink: killableRaw(opened.sink, wire) };
    },
  };
}

/** A secondary, dying before the n-th confirmation (secondary-acked) or inside a replayed submit. */
export function killableSecondaryPart<B, St>(
  part: SecondaryPart<B, St>,
  wire: Tripwire,
  recovering: boolean,
): SecondaryPart<B, St> {
  return {
    ...part,
    open: async (context) => {
      const confirm = killableConfirm(context.confirm, wire, 'secondary-acked');
      const opened = await part.open({ ...context, confirm });
      return { ...opened, sink: killableSecondary(opened.sink, wire, recovering) };
    },
  };
}

import type { ZerobusFailure } from './errors.js';

/** Where the error surfaced: the same message means different things at each. */
export type ErrorSite = 'create' | 'submit' | 'wait';

// The native SDK throws plain `Error`s (code GenericFailure) and its
// `isRetryable` is unreachable from Node, so the message is all there is to
// classify by. Patterns from observing the binding; see ../../shared notes
// summarised in docs/adr. Checked in order: the first match wins.
const RULES: readonly {
  readonly pattern: RegExp;
  readonly failure: ZerobusFailure;
  readonly sites?: readonly ErrorSite[];
}[] = [
  { pattern: /failed to extract workspace_id/i, failure: 'fatal-config' },
  { pattern: /uc table name is invalid/i, failure: 'fatal-config' },
  { pattern: /arrow schema does not match the target table/i, failure: 'fatal-config' },
  {
    pattern: /unauthenticated|permission ?denied|not ?found|invalid ?argument/i,
    failure: 'fatal-config',
    sites: ['create'],
  },
  {
    pattern: /failed to ingest batch: invalid argument/i,
    failure: 'poison-batch',
    sites: ['submit'],
  },
  { pattern: /token fetch failed/i, failure: 'transient' },
  {
    pattern:
      /unavailable|deadline|timed? ?out|resource ?exhausted|aborted|cancell?ed|connection|broken pipe|reset by peer/i,
    failure: 'transient',
  },
  {
    pattern:
      /invalid ?argument|unauthenticated|permission ?denied|out ?of ?range|unimplemented|not ?found/i,
    failure: 'poison-stream',
    sites: ['wait', 'submit'],
  },
];

/**
 * Classifies a failure of the SDK by its message and where it surfaced.
 * "Stream is closing or closed" is a consequence, not a cause: the caller
 * passes the root cause when it has one. Anything unrecognised is treated as
 * poisoning the stream — rebuilding is bounded and loses nothing (unconfirmed
 * batches are replayed), whereas retrying forever on a dead stream stalls.
 */
export function classifyZerobusError(error: unknown, site: ErrorSite): ZerobusFailure {
  const message = error instanceof Error ? error.message : String(error);
  for (const rule of RULES) {
    if (rule.sites !== undefined && !rule.sites.includes(site)) continue;
    if (rule.pattern.test(message)) return rule.failure;
  }
  return 'poison-stream';
}

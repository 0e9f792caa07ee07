/**
 * Whether this runtime can run @platformatic/kafka (`platformaticConsumer`):
 * it needs Node 22 or later (its engines field says 22.22 / 24.6; on Node 20
 * its first call fails on `Promise.withResolvers`). Kept apart from the
 * client's loader so that its types never reach a kafkajs user's compile.
 */
export function platformaticSupported(): boolean {
  return typeof (Promise as { withResolvers?: unknown }).withResolvers === 'function';
}

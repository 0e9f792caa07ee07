import type { ConfirmTarget, Lane } from '../../src/confirm.js';
import type { Receipt } from '../../src/receipt.js';

/** Whether `p` settles within a few turns of the event loop (it is observed, never left unhandled). */
export async function settled(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  p.then(
    () => (done = true),
    () => (done = true),
  );
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
  return done;
}

/** A promise and the function that resolves it. */
export function gate(): { opened: Promise<void>; open: () => void } {
  let open = (): void => undefined;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

/** A target that records every confirmation it is given, in order. */
export function recordingTarget<L extends Lane>(): ConfirmTarget<L> & {
  readonly applied: Receipt[];
} {
  const applied: Receipt[] = [];
  return {
    applied,
    apply: (_confirm, receipt) => {
      applied.push(receipt);
      return Promise.resolve();
    },
  };
}

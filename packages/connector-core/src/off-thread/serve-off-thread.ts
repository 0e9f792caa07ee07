import { parentPort, type Transferable } from 'node:worker_threads';
import type { OffThreadAnswer, OffThreadRequest } from './off-thread.js';

/** An answer and the buffers to transfer with it (not copy). */
export interface Served<A> {
  readonly answer: A;
  readonly transfer?: readonly Transferable[];
}

/**
 * The worker side of `OffThread`: answers each request with `handle`, its
 * buffers transferred; a throw is answered as an error, and the caller then
 * runs the same request on its own thread.
 */
// Q is the caller's statement of what its OffThread sends, named once here on purpose.
// eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters
export function serveOffThread<Q, A>(handle: (request: Q) => Served<A>): void {
  const port = parentPort;
  if (port === null) throw new Error('serveOffThread runs in a worker thread only');
  port.on('message', ({ id, request }: OffThreadRequest<Q>) => {
    let served: Served<A>;
    try {
      served = handle(request);
    } catch (error) {
      const failed: OffThreadAnswer<A> = {
        id,
        error: error instanceof Error ? error.message : String(error),
      };
      port.postMessage(failed);
      return;
    }
    const answered: OffThreadAnswer<A> = { id, answer: served.answer };
    port.postMessage(answered, served.transfer as Transferable[] | undefined);
  });
}

import { parentPort } from 'node:worker_threads';
import { hashPacked, type HashKey, type PackedValues } from './content-hash.js';

/** A request to the hash thread: one piece's values (see hash-thread.ts). */
export interface HashRequest {
  readonly id: number;
  readonly key: HashKey;
  readonly packed: PackedValues;
}

/** Its answer: the digests, or why they could not be made. */
export type HashAnswer =
  | { readonly id: number; readonly digests: Uint8Array; readonly hashed: Uint8Array }
  | { readonly id: number; readonly error: string };

// The hash thread: hashes each piece it is sent and sends the digests back,
// their buffers transferred, not copied.
parentPort?.on('message', (request: HashRequest) => {
  let answer: HashAnswer;
  try {
    const { digests, hashed } = hashPacked(request.key, request.packed);
    answer = { id: request.id, digests, hashed };
    parentPort?.postMessage(answer, [digests.buffer, hashed.buffer]);
  } catch (error) {
    answer = { id: request.id, error: error instanceof Error ? error.message : String(error) };
    parentPort?.postMessage(answer);
  }
});

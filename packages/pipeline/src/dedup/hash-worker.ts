import { serveOffThread } from '@thalweg/connector-core';
import { hashPacked } from './content-hash.js';
import type { Digests, HashRequest } from './hash-thread.js';

// The hash thread: hashes each piece it is sent and sends the digests back,
// their buffers transferred, not copied.
serveOffThread<HashRequest, Digests>((request) => {
  const { digests, hashed } = hashPacked(request.key, request.packed);
  return { answer: { digests, hashed }, transfer: [digests.buffer, hashed.buffer] };
});

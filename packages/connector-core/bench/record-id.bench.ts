import { createHash } from 'node:crypto';
import { RecordIdHasher } from '@thalweg/connector-core';
import { emit, opsPerSecond } from './measure.js';

// Record id hashing rate for the payload sizes the issue names, with the
// bare SHA-256 of the same bytes as the in-run baseline (the cost of our
// layout is the difference).
for (const bytes of [256, 4096]) {
  const payload = Buffer.alloc(bytes, 0x5a);
  const hasher = new RecordIdHasher('kafka-prod', 'orders', 3);
  let offset = 0;
  const ids = opsPerSecond(() => hasher.id(offset++, payload));
  const bare = opsPerSecond(() => createHash('sha256').update(payload).digest());
  emit({
    bench: 'record-id',
    payload_bytes: bytes,
    hashes_per_s: ids,
    mb_per_s: Math.round((ids * bytes) / 1e6),
    bare_sha256_per_s: bare,
    ratio_to_bare: Number((ids / bare).toFixed(3)),
  });
}

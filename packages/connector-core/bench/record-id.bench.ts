import { createHash, hash } from 'node:crypto';
import { RecordIdHasher } from '@thalweg/connector-core';
import { emit, opsPerSecond } from './measure.js';

/** Records whose bytes one bulk digest covers: what the digest itself costs, without a call per record. */
const BULK = 1000;

// Record id hashing rate for the payload sizes the issue names, with the
// bare SHA-256 of the same bytes as the in-run baseline (the cost of our
// layout is the difference), and the same bytes digested BULK records per
// call: the digest's own cost, so the rest is the cost of a call.
for (const bytes of [256, 4096]) {
  const payload = Buffer.alloc(bytes, 0x5a);
  const hasher = new RecordIdHasher('kafka-prod', 'orders', 3);
  let offset = 0;
  const ids = opsPerSecond(() => hasher.id(offset++, payload));
  const bare = opsPerSecond(() => createHash('sha256').update(payload).digest());
  const bulk = Buffer.alloc(bytes * BULK, 0x5a);
  const bulkRecords = opsPerSecond(() => hash('sha256', bulk, 'binary')) * BULK;
  emit({
    bench: 'record-id',
    payload_bytes: bytes,
    hashes_per_s: ids,
    mb_per_s: Math.round((ids * bytes) / 1e6),
    bare_sha256_per_s: bare,
    ratio_to_bare: Number((ids / bare).toFixed(3)),
    bulk_digest_records_per_s: Math.round(bulkRecords),
    call_share_of_id: Number((1 - ids / bulkRecords).toFixed(3)),
  });
}

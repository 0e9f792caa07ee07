import { workerData } from 'node:worker_threads';
import { serveOffThread } from '@thalweg/connector-core';
import {
  JsonDeriver,
  type JsonDerivePlan,
  type PackedBatch,
  type PackedDerived,
} from './packed-derive.js';

// The derivation thread of `jsonDerivation`: its plan comes once, at start;
// each packed batch comes in, its IPC bytes go back, transferred.
const deriver = new JsonDeriver(workerData as JsonDerivePlan);

serveOffThread<PackedBatch, PackedDerived>((batch) => {
  const derived = deriver.derive(batch);
  return { answer: derived, transfer: derived.ipc === null ? [] : [derived.ipc.buffer] };
});

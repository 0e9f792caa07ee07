export * from './errors.js';
export * from './options.js';
export * from './segment-fs.js';
export * from './raw-envelope.js';
export * from './segment-codec.js';
export * from './segment-name.js';
export * from './raw-segment-sink.js';
export type { PackedBatch } from './packed-batch.js';

export * from './part-context.js';
export * from './parts.js';
export * from './derive-context.js';
export * from './memory-share.js';

export * from './metric-catalog.js';
export * from './metric-family.js';
export * from './observed.js';
export * from './collect.js';
export * from './prometheus-text.js';
export * from './http-handlers.js';
export * from './telemetry-server.js';

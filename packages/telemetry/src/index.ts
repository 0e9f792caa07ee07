export * from './metric-catalog.js';
export * from './metric-family.js';
export * from './observed.js';
export * from './collect.js';

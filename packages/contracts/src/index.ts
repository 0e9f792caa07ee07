export * from './errors.js';
export * from './contract-records.js';
export * from './contract-target.js';
export * from './sink-subject.js';
export * from './sink-steps.js';
export * from './sink-cases.js';
export * from './sink-contract.js';

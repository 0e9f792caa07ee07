export * from './errors.js';
export * from './classify-error.js';
export * from './transport.js';

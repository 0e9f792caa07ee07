export * from './compile-blocks.js';
export * from './doc-block.js';
export * from './run-block.js';
export * from './documented-defaults.js';

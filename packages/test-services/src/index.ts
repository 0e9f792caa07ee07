export * from './service-env.js';
export * from './unique-name.js';

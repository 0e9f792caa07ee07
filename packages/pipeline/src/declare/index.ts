export * from './topology-declaration.js';
export * from './open-topology.js';

export { runDemo, type DemoOptions, type DemoSummary } from './demo/run-demo.js';
export { GeneratedSource, type GeneratedSourceOptions } from './demo/generated-source.js';

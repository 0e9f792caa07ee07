export * from './errors.js';
export * from './options.js';
export * from './ipc-stream-source.js';
export * from './ipc-stream-part.js';
export { parseAnswer, type OpenedStream, type ResumeAt } from './stream-connection.js';

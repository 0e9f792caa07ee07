export * from './errors.js';
export type { FileAccess, FileStat, OpenFile } from './file-access.js';
export { nodeFileAccess } from './file-access.js';
export type { FileEntry, FileSetSpec } from './file-set.js';
export { DEFAULTS, type FileSetSourceOptions } from './source-options.js';
export type { FileSetSourceStats } from './source-stats.js';
export * from './file-set-source.js';
export { files } from './files-part.js';

export { s3FileStore } from './s3-file-store.js';

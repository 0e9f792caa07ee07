import type { PartContext, SourcePart } from '@thalweg/connector-core';
import { FileSetSource } from './file-set-source.js';
import {
  resolveOptions,
  type FileSetSourceOptions,
  type ResolvedOptions,
} from './source-options.js';

/**
 * Declares a source over a fixed set of NDJSON or Arrow IPC files; the
 * topology opens it (`openTopology` in `@thalweg/pipeline`). Its `cluster`
 * (default `file-set`) is the topology's one declaration of the cluster:
 * every sink part is given it from here, to hash record ids with.
 *
 * The options are validated here, a refusal naming the field
 * (`fileSource.maxBatchBytes`); opening lists and stats the set, and logs
 * the effective settings through the context's `debug`.
 */
export function files(options: FileSetSourceOptions): SourcePart<FileSetSource> {
  const resolved = resolveOptions(options);
  return {
    role: 'source',
    async open(context: PartContext) {
      const source = await FileSetSource.open(options);
      context.log.debug(
        `thalweg source-files: ${describeOptions(resolved, source.fileNames.length)}`,
      );
      return source;
    },
  };
}

/** The effective settings, one line: what a run read and how. */
export function describeOptions(o: ResolvedOptions, files: number): string {
  const where =
    o.files.kind === 'directory'
      ? `directory=${o.files.directory} extension=${o.files.extension}`
      : `paths=${o.files.paths.length}`;
  return [
    `format=${o.format}`,
    ...(o.timestampColumn === undefined ? [] : [`timestampColumn=${o.timestampColumn}`]),
    `cluster=${o.cluster}`,
    `topic=${o.topic}`,
    where,
    `files=${files}`,
    `maxBatchRecords=${o.maxBatchRecords}`,
    `maxBatchBytes=${o.maxBatchBytes}`,
    `maxRecordBytes=${o.maxRecordBytes}`,
    `maxBufferBytes=${o.maxBufferBytes}`,
    `readChunkBytes=${o.readChunkBytes}`,
  ].join(' ');
}

import type { PartContext, SourcePart } from '@thalweg/connector-core';
import { IpcStreamSource } from './ipc-stream-source.js';
import { describeOptions, resolveOptions, type IpcStreamSourceOptions } from './options.js';

/**
 * Declares a source over one Arrow IPC stream; the topology opens it. The
 * options are validated here, a refusal naming the field
 * (`ipcStreamSource.resume`); opened, the source logs its effective
 * settings through the context's `debug`. Nothing connects before
 * `batches()`.
 */
export function ipcStream(options: IpcStreamSourceOptions): SourcePart<IpcStreamSource> {
  const resolved = resolveOptions(options);
  return {
    role: 'source',
    open(context: PartContext) {
      const source = new IpcStreamSource(options);
      context.log.debug(`thalweg source-ipc-stream: ${describeOptions(resolved)}`);
      return source;
    },
  };
}

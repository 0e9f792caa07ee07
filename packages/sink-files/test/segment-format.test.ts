import { ConfigError } from '@thalweg/connector-core';
import { describe, expect, it } from 'vitest';
import {
  ARROW_IPC_SEGMENTS,
  RawSegmentSink,
  type RawSegmentSinkOptions,
  type SegmentFormat,
} from '../src/index.js';
import {
  anchor,
  batchOf,
  CLUSTER,
  ID,
  quiet,
  readAll,
  recordingTarget,
  tempDir,
} from './helpers.js';

/** Arrow IPC under another kind, counting what the sink asks of its format. */
function countingFormat(): SegmentFormat & { encoded: number; decoded: number } {
  const format = {
    kind: 'counted-ipc',
    extension: 'arrow',
    encoded: 0,
    decoded: 0,
    encode: (...args: Parameters<SegmentFormat['encode']>) => {
      format.encoded++;
      return ARROW_IPC_SEGMENTS.encode(...args);
    },
    decode: (...args: Parameters<SegmentFormat['decode']>) => {
      format.decoded++;
      return ARROW_IPC_SEGMENTS.decode(...args);
    },
  };
  return format;
}

const options = (dir: string, writer: 'inline' | 'worker'): RawSegmentSinkOptions => ({
  id: ID,
  dir,
  cluster: CLUSTER,
  confirm: recordingTarget(),
  writer,
  log: quiet,
});

describe('SegmentFormat', () => {
  it('is what the sink encodes each group commit with and decodes each read with', async () => {
    const format = countingFormat();
    const sink = await RawSegmentSink.open(options(await tempDir(), 'inline'), { format });
    expect(sink.descriptor.kind).toBe('counted-ipc');
    const b = batchOf('t', 0, 0, 4);
    await sink.submit(b, b.span, anchor(b));
    await sink.flush();
    expect((await readAll(sink, 't', 0)).records.map((r) => r.offset)).toEqual([0, 1, 2, 3]);
    expect([format.encoded, format.decoded]).toEqual([1, 1]);
    await sink.close();
  });

  it('refuses another format on the worker writer, which writes Arrow IPC only', async () => {
    const refused = await RawSegmentSink.open(options(await tempDir(), 'worker'), {
      format: countingFormat(),
    }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ConfigError);
    expect((refused as ConfigError).path).toBe('writer');
  });
});

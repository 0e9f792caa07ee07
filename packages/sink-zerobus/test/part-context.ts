import { recordingPartContext } from '@thalweg/contracts';
import { sinkId, type SinkContext, type SourceRecord } from '@thalweg/connector-core';
import { recordingTarget } from './helpers.js';

/** A secondary part's context as a topology gives it, with what it logged and confirmed. */
export function partContextOf(id: string, cluster: string) {
  const part = recordingPartContext();
  const confirm = recordingTarget<'secondary'>();
  const context: SinkContext<'secondary'> = { ...part.context, id: sinkId(id), cluster, confirm };
  return { context, info: part.info, debug: part.debug, confirm };
}

const enc = new TextEncoder();

/** A source record whose value is `text`, stamped `timestamp`. */
export function textRecord(offset: number, text: string, timestamp = 0): SourceRecord {
  return { offset, key: null, value: enc.encode(text), timestamp, headers: [] };
}

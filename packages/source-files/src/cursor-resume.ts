import { closeSync, openSync, readSync } from 'node:fs';
import type { SourceCursor } from '@thalweg/connector-core';
import { consumedPrefix } from './consumed-prefix.js';
import { FileSourceError, readFailed } from './errors.js';
import type { FileEntry } from './file-set.js';
import { outlineIpcFile } from './ipc-walk.js';

/** Where reading resumes: a file, a cursor position in it, the offset of the record there. */
export interface ResumePoint {
  readonly fileIndex: number;
  readonly position: number;
  readonly nextOffset: number;
  /** Arrow IPC: rows of the batch at `position` that are already durable. */
  readonly skipRows: number;
}

/**
 * Checks a stored cursor against the configured set and the files on disk,
 * and refuses, naming the cursor field, anything it cannot resume exactly:
 *
 * - `kind`: not a `file-set` cursor;
 * - `files`: not a prefix of the configured set (the set may have grown at
 *   its end; a file missing, renamed or moved shifts every offset after it);
 * - `consumed` (TWG_FILE_CHANGED, naming the file): a file no longer begins
 *   with the bytes consumed from it, or one before `file` grew;
 * - `file`: not one of `files`;
 * - `position`: beyond the file, or not where a record starts. NDJSON: 0, the
 *   size, or just after a `\n`. Arrow IPC: 0, a record batch message, or the
 *   end of the messages;
 * - `nextOffset`: for Arrow IPC, not a row of the batch at `position` once
 *   the rows before it are counted (from the headers of every file before).
 *   NDJSON offsets cannot be checked without reading every line before the
 *   cursor; they are taken as stored.
 */
export function resumePoint(
  cursor: SourceCursor,
  files: readonly FileEntry[],
  format: 'ndjson' | 'arrow-ipc',
): ResumePoint {
  if (cursor.kind !== 'file-set') {
    refuse(
      'cursor.kind',
      `a ${JSON.stringify(cursor.kind)} cursor, this source resumes from "file-set" cursors`,
    );
  }
  const stored = cursor.files as unknown;
  if (!Array.isArray(stored) || !stored.every((f) => typeof f === 'string')) {
    refuse('cursor.files', 'is not a list of file names');
  }
  if (typeof (cursor.file as unknown) !== 'string') refuse('cursor.file', 'is not a file name');
  const position = whole(cursor.position, 'cursor.position');
  const nextOffset = whole(cursor.nextOffset, 'cursor.nextOffset');
  cursor.files.forEach((name, i) => {
    const entry = files[i];
    if (entry === undefined) {
      refuse(
        `cursor.files[${i}]`,
        `${JSON.stringify(name)} is not in the configured set, which holds ${files.length} files: the set must extend the cursor's`,
      );
    }
    if (entry.name !== name) {
      refuse(
        `cursor.files[${i}]`,
        `is ${JSON.stringify(name)}, the configured set has ${JSON.stringify(entry.name)} there: a file is missing, renamed or reordered`,
      );
    }
  });
  const fileIndex = cursor.files.indexOf(cursor.file);
  const entry = files[fileIndex];
  if (fileIndex < 0 || entry === undefined) {
    refuse('cursor.file', `${JSON.stringify(cursor.file)} is not one of cursor.files`);
  }
  const consumed = cursor.consumed;
  // A file shorter than what was read from it changed; say so before the
  // position checks would call the position itself wrong.
  if (consumed !== undefined) notShrunk(consumed, files);
  if (position > entry.size) {
    refuse(
      'cursor.position',
      `${position} is beyond the ${entry.size} bytes of ${JSON.stringify(entry.name)}`,
    );
  }
  let point: ResumePoint;
  if (format === 'ndjson') {
    if (position > 0 && position < entry.size && byteAt(entry, position - 1) !== 0x0a) {
      refuse(
        'cursor.position',
        `${position} in ${JSON.stringify(entry.name)} does not follow a '\\n': not a record boundary`,
      );
    }
    point = { fileIndex, position, nextOffset, skipRows: 0 };
  } else {
    point = ipcResume(files, fileIndex, position, nextOffset);
  }
  if (consumed !== undefined) checkConsumed(consumed, files, fileIndex, position);
  return point;
}

function notShrunk(consumed: readonly { readonly size: number }[], files: readonly FileEntry[]) {
  // Stored JSON: the type is what was written, not necessarily what was read back.
  const given: unknown = consumed;
  if (!Array.isArray(given) || !given.every((c) => typeof c === 'object' && c !== null)) {
    refuse('cursor.consumed', 'is not a list of { size, digest }');
  }
  consumed.forEach((c, i) => {
    const entry = files[i];
    const size = whole(c.size, `cursor.consumed[${i}].size`);
    if (entry !== undefined && entry.size < size) {
      changed(entry, `is ${entry.size} bytes, shorter than the ${size} bytes already consumed`);
    }
  });
}

/**
 * Every file the cursor consumed must still begin with the bytes it
 * consumed. A file before the cursor's file must also not have grown: its
 * new records would need offsets that the records of the files after it
 * already hold (offsets count across the set), so only the file being read
 * may grow. The cursor's own file may, and is read on from the position.
 */
function checkConsumed(
  consumed: readonly { readonly size: number; readonly digest: string }[],
  files: readonly FileEntry[],
  fileIndex: number,
  position: number,
): void {
  if (consumed.length !== fileIndex + 1) {
    refuse('cursor.consumed', `must hold one entry per file up to cursor.file (${fileIndex + 1})`);
  }
  consumed.forEach((c, i) => {
    const entry = files[i];
    if (entry === undefined) throw new Error(`file ${i} is not in the set`);
    const size = whole(c.size, `cursor.consumed[${i}].size`);
    if (i === fileIndex && size !== position) {
      refuse(`cursor.consumed[${i}].size`, `${size} is not cursor.position (${position})`);
    }
    if (i < fileIndex && entry.size > size) {
      changed(
        entry,
        `grew from ${size} to ${entry.size} bytes after it was consumed and later files were read: ` +
          'its new records would take offsets later files already hold; append only to the last file of the set',
      );
    }
    if (consumedPrefix(entry, size).digest !== c.digest) {
      changed(entry, `its first ${size} bytes, already consumed, are not the bytes that were read`);
    }
  });
}

function changed(entry: FileEntry, reason: string): never {
  throw new FileSourceError('TWG_FILE_CHANGED', `${reason}: refused rather than read`, {
    file: entry.name,
  });
}

function ipcResume(
  files: readonly FileEntry[],
  fileIndex: number,
  position: number,
  nextOffset: number,
): ResumePoint {
  let first = 0;
  for (const f of files.slice(0, fileIndex)) first += outlineIpcFile(f.path, f.name, f.size).rows;
  const entry = files[fileIndex];
  if (entry === undefined) throw new Error(`file ${fileIndex} is not in the set`);
  const outline = outlineIpcFile(entry.path, entry.name, entry.size);
  const at = (rowsBefore: number, rows: number): ResumePoint => {
    const skipRows = nextOffset - first - rowsBefore;
    if (skipRows < 0 || (skipRows >= rows && skipRows !== 0)) {
      refuse(
        'cursor.nextOffset',
        `${nextOffset} is not a row at position ${position} of ${JSON.stringify(entry.name)}, which holds offsets [${first + rowsBefore}, ${first + rowsBefore + rows})`,
      );
    }
    return { fileIndex, position, nextOffset, skipRows };
  };
  if (position === 0) return at(0, 0);
  if (outline.ends.includes(position)) return at(outline.rows, 0);
  const batch = outline.batches.find((b) => b.at === position);
  if (batch === undefined) {
    refuse(
      'cursor.position',
      `${position} in ${JSON.stringify(entry.name)} is not a record batch message: not a record boundary`,
    );
  }
  return at(batch.rowsBefore, batch.rows);
}

function byteAt(entry: FileEntry, position: number): number | undefined {
  const one = new Uint8Array(1);
  let fd: number;
  try {
    fd = openSync(entry.path, 'r');
  } catch (cause) {
    throw readFailed(entry.name, 'open', cause);
  }
  try {
    return readSync(fd, one, 0, 1, position) === 1 ? one[0] : undefined;
  } catch (cause) {
    throw readFailed(entry.name, `reading a byte at ${position}`, cause);
  } finally {
    closeSync(fd);
  }
}

function whole(value: number, field: string): number {
  if (!Number.isSafeInteger(value) || value < 0)
    refuse(field, `${String(value)} is not a non-negative safe integer`);
  return value;
}

function refuse(field: string, reason: string): never {
  throw new FileSourceError('TWG_FILE_CURSOR_INVALID', reason, { field });
}

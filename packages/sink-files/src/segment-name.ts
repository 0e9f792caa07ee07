/**
 * Segment files live flat in the sink's directory. A segment holds one group
 * commit, which can mix partitions, so its name carries only the write
 * sequence; what it holds is in its manifest and in the in-memory index.
 *
 * - `seg-<16-digit sequence>.<extension>`: a durable segment, `.arrow` for
 *   an Arrow IPC file, `.parquet` for a Parquet one (segment-format.ts);
 * - `.seg-<sequence>.<attempt>.tmp`: being written; after a crash it never
 *   became durable, and nothing was confirmed from it, so open deletes it.
 */
/**
 * Only the known formats' extensions: open deletes a segment-named file the
 * manifest does not list (never confirmed), so a name must not match a file
 * someone put there for another reason (`seg-….bak`).
 */
const SEGMENT = /^seg-(\d{16})\.(?:arrow|parquet)$/;
const TEMP = /^\.seg-\d{16}\.\d+\.tmp$/;

/** The Arrow IPC segment's name (one argument, so it maps over sequences). */
export function segmentName(sequence: number): string {
  return segmentFileName(sequence, 'arrow');
}

/** A segment's name in the format with file name `extension`. */
export function segmentFileName(sequence: number, extension: string): string {
  return `seg-${String(sequence).padStart(16, '0')}.${extension}`;
}

export function tempName(sequence: number, attempt: number): string {
  return `.seg-${String(sequence).padStart(16, '0')}.${attempt}.tmp`;
}

/** The sequence of a segment file name, or null when the name is not a segment's. */
export function segmentSequence(name: string): number | null {
  const match = SEGMENT.exec(name);
  return match?.[1] === undefined ? null : Number(match[1]);
}

export function isTempName(name: string): boolean {
  return TEMP.test(name);
}

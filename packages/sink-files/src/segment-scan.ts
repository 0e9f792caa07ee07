import { join } from 'node:path';
import { RawSinkError } from './errors.js';
import type { ResolvedOptions } from './options.js';
import { decodeSegment } from './segment-codec.js';
import { SegmentIndex } from './segment-index.js';
import { isTempName, segmentSequence } from './segment-name.js';

/**
 * Open-time scan of the sink's directory: create it if needed, delete the
 * temp files a crash left (never durable, so nothing was confirmed from
 * them), and index every segment. A segment that does not parse fails the
 * scan with its file named rather than being skipped: raw that cannot prove
 * what it holds must not be written over or replayed from. Files that are
 * neither segments nor temp files are not ours and are left alone.
 */
export async function scanSegments(
  o: ResolvedOptions,
): Promise<{ index: SegmentIndex; nextSequence: number }> {
  await o.fs.ensureDir(o.dir);
  const names = (await o.fs.list(o.dir)).sort();
  const temps = names.filter(isTempName);
  for (const name of temps) await o.fs.remove(join(o.dir, name));
  if (temps.length > 0) await o.fs.syncDir(o.dir);
  const index = new SegmentIndex();
  let last = -1;
  for (const name of names) {
    const sequence = segmentSequence(name);
    if (sequence === null) continue;
    const path = join(o.dir, name);
    const bytes = await o.fs.readFile(path);
    const segment = decodeSegment(bytes, path);
    // Record ids are computed with the cluster: records of two clusters in
    // one directory would get ids that never match on redelivery.
    if (segment.cluster !== o.cluster) {
      throw new RawSinkError(
        'TWG_RAW_SEGMENT_CORRUPT',
        `was written for cluster ${JSON.stringify(segment.cluster)}, this sink is for ` +
          `${JSON.stringify(o.cluster)}; one directory holds one cluster`,
        { file: path },
      );
    }
    index.add(
      name,
      sequence,
      bytes.byteLength,
      segment.batches.map((b) => ({ span: b.span, records: b.rows.length })),
    );
    last = Math.max(last, sequence);
  }
  return { index, nextSequence: last + 1 };
}

/**
 * The fields every `ack-lane` bench line shares, so the fake and the real
 * binding report the same figures in the same form.
 */
export function ackLaneFields(
  transport: 'fake' | 'sdk',
  ackMs: number,
  batchBytes: number,
  piped: { readonly mbs: number; readonly coalesceP50: number | null },
  serialMbs: number,
): Record<string, unknown> {
  return {
    bench: 'ack-lane',
    transport,
    ack_ms: ackMs,
    batch_bytes: batchBytes,
    pipelined_mb_s: Number(piped.mbs.toFixed(1)),
    serial_mb_s: Number(serialMbs.toFixed(2)),
    ratio: Number((piped.mbs / serialMbs).toFixed(1)),
    coalesce_p50: piped.coalesceP50 === null ? null : Number(piped.coalesceP50.toFixed(1)),
    // Issue 23's targets for the real binding; the fake has none.
    ...(transport === 'sdk' ? { target_coalesce_p50: 8, target_ratio: 30 } : {}),
  };
}

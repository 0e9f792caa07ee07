/** The memory limit a topology assumes when it is given none (a pipeline's `memoryLimitBytes`). */
export const DEFAULT_MEMORY_LIMIT_BYTES = 1024 * 1024 * 1024;

/**
 * A queue's default byte bound, for a part that holds one and was given no
 * bound of its own: `1 / divisor` of the topology's memory limit, at most
 * `capBytes` (the fixed bound the part had before it followed the limit, so
 * the default limit keeps the default bound). What a queue holds is memory
 * that flow control cannot shed by reading less, so its share shrinks with
 * the limit a user sets (ADR 0047).
 */
export function memoryShare(memoryLimitBytes: number, divisor: number, capBytes: number): number {
  return Math.max(1, Math.min(capBytes, Math.floor(memoryLimitBytes / divisor)));
}

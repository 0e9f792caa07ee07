/**
 * The memory flow control reads by default (ADR 0041): the V8 heap in use
 * plus the `ArrayBuffer`s and `Buffer`s allocated outside it. That is the
 * memory reading less can free: the records between the source and raw,
 * the lanes' queues, the rows a sink holds, and the garbage they become.
 *
 * Not RSS. RSS also holds what reading less never frees: the heap V8 has
 * reserved beyond what it uses, memory the allocator keeps after a free,
 * code, thread stacks, other isolates. Read as pressure, that kept the
 * flow governor critical for a whole catch-up that it could not shorten,
 * and halved the full topology's throughput for a few percent of RSS
 * (blueprints/topology-speed.md). Set `memoryLimitBytes` below the
 * process's real limit by that overhead, or inject `memoryUsage` (RSS, a
 * cgroup's reading) where a different signal is wanted. `usage`, when
 * given, is a reading already taken (the soak samples RSS from the same one).
 */
export function liveMemoryBytes(usage: NodeJS.MemoryUsage = process.memoryUsage()): number {
  return usage.heapUsed + usage.arrayBuffers;
}

import type { z } from 'zod';

/**
 * Refuses a threshold that does not sit strictly above the one it escalates
 * from. Reported on the upper field, because that is the one a user who
 * raised the lower threshold has to move too.
 */
export function requireAbove(
  ctx: z.RefinementCtx,
  path: readonly string[],
  value: number,
  floorPath: string,
  floor: number,
): void {
  if (value <= floor) {
    ctx.addIssue({
      code: 'custom',
      path: [...path],
      message: `must be above ${floorPath} (${floor})`,
    });
  }
}

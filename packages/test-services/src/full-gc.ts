import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * V8's full collection, without `--expose-gc` on the command line: the flag
 * set at run time exposes `gc` to contexts created after it. For measuring
 * what is retained (a soak's samples, a bench between timed runs, a test
 * that a buffer was let go), never for production code.
 */
export function fullGc(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

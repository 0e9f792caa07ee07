import { createRequire } from 'node:module';

/**
 * The kernel's exclusive lock on an open file, through fs-native-extensions
 * (prebuilt; on Linux an open-file-description lock, F_OFD_SETLK: held by
 * the descriptor, not the process, so a second descriptor in the same
 * process is refused too; released by the kernel when the descriptor is
 * closed or its process dies, SIGKILL and power loss included).
 */
interface NativeLocks {
  tryLock(fd: number, offset?: number, length?: number, opts?: { shared?: boolean }): boolean;
}

const native = createRequire(import.meta.url)('fs-native-extensions') as NativeLocks;

/** Takes the exclusive lock of `fd` without waiting: false when another descriptor holds it. */
export function tryExclusiveLock(fd: number): boolean {
  return native.tryLock(fd);
}

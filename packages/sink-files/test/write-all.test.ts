import { describe, expect, it } from 'vitest';
import { writeAll, type WritableHandle } from '../src/write-all.js';

/**
 * A handle over a device with `room` bytes left, as libuv reports it: writev
 * stops short and returns what it wrote; the next write fails with ENOSPC.
 */
function deviceWith(room: number): WritableHandle & { readonly bytes: number[] } {
  const bytes: number[] = [];
  const take = (b: Uint8Array): number => {
    const n = Math.min(b.byteLength, room - bytes.length);
    for (const x of b.subarray(0, n)) bytes.push(x);
    return n;
  };
  return {
    bytes,
    writev: async (buffers) => {
      let n = 0;
      for (const b of buffers) n += take(b);
      return { bytesWritten: n };
    },
    write: async (buffer, offset) => {
      if (bytes.length >= room) {
        throw Object.assign(new Error('ENOSPC: no space left on device, write'), {
          code: 'ENOSPC',
        });
      }
      return { bytesWritten: take(buffer.subarray(offset)) };
    },
  };
}

const chunks = [new Uint8Array([1, 2, 3]), new Uint8Array([4, 5]), new Uint8Array([6, 7, 8, 9])];

describe('writeAll', () => {
  it('surfaces the ENOSPC that a short writev swallowed', async () => {
    const device = deviceWith(4);
    const written = writeAll(device, chunks);
    await expect(written).rejects.toMatchObject({ code: 'ENOSPC' });
    expect(device.bytes).toEqual([1, 2, 3, 4]);
  });

  it('writes the rest after a short writev that was only short', async () => {
    const bytes: number[] = [];
    const handle: WritableHandle = {
      // Stops after the first chunk once, as a signal-interrupted write may.
      writev: async (buffers) => {
        const head = buffers[0]!;
        for (const x of head) bytes.push(x);
        return { bytesWritten: head.byteLength };
      },
      write: async (buffer, offset) => {
        // One byte at a time: every short write is resumed.
        bytes.push(buffer[offset]!);
        return { bytesWritten: 1 };
      },
    };
    await writeAll(handle, chunks);
    expect(bytes).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it('refuses a write that makes no progress, naming the shortfall', async () => {
    const handle: WritableHandle = {
      writev: async () => ({ bytesWritten: 5 }),
      write: async () => ({ bytesWritten: 0 }),
    };
    await expect(writeAll(handle, chunks)).rejects.toThrow(/wrote 5 of 9 bytes/);
  });
});

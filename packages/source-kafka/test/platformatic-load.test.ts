import { describe, expect, it } from 'vitest';
import { loadPlatformatic, type PlatformaticModule } from '../src/platformatic-load.js';
import { platformaticSupported } from '../src/platformatic-runtime.js';

const notInstalled = (): Promise<PlatformaticModule> =>
  Promise.reject(
    Object.assign(new Error("Cannot find package '@platformatic/kafka'"), {
      code: 'ERR_MODULE_NOT_FOUND',
    }),
  );

describe('loadPlatformatic', () => {
  it('names the optional peer dependency when it is not installed (on Node 20, the runtime first)', async () => {
    const refused = loadPlatformatic(notInstalled);
    if (platformaticSupported()) {
      await expect(refused).rejects.toThrow(
        'TWG_KAFKA_CLIENT_UNSUPPORTED: platformaticConsumer needs @platformatic/kafka, an optional ' +
          'peer dependency of @thalweg/source-kafka: install @platformatic/kafka@^2.12.1 beside it',
      );
    } else {
      await expect(refused).rejects.toThrow(
        /TWG_KAFKA_CLIENT_UNSUPPORTED: @platformatic\/kafka needs Node 22\.22\+ or 24\.6\+/,
      );
    }
  });

  it('passes on any other failure to load as it is', async () => {
    const broken = new Error('boom');
    const rejected = loadPlatformatic(() => Promise.reject(broken));
    if (platformaticSupported()) await expect(rejected).rejects.toBe(broken);
    else await expect(rejected).rejects.toThrow(/needs Node 22\.22\+/);
  });
});

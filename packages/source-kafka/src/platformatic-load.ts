import { KafkaSourceError } from './errors.js';
import { platformaticSupported } from './platformatic-runtime.js';

/** The client module, loaded on first use so that kafkajs users never load it. */
export type PlatformaticModule = typeof import('@platformatic/kafka');

/**
 * Loads @platformatic/kafka (an optional peer dependency), or refuses by
 * name: on a runtime it cannot run on, instead of letting a TypeError
 * surface from inside the client (thalweg does not patch the global it
 * lacks), and when the application has not installed it. `load` is for
 * tests.
 */
export async function loadPlatformatic(
  load: () => Promise<PlatformaticModule> = () => import('@platformatic/kafka'),
): Promise<PlatformaticModule> {
  if (!platformaticSupported()) {
    throw new KafkaSourceError(
      'TWG_KAFKA_CLIENT_UNSUPPORTED',
      `@platformatic/kafka needs Node 22.22+ or 24.6+ and this is Node ${process.versions.node}; ` +
        'use the default client (kafkajs) on this runtime',
    );
  }
  try {
    return await load();
  } catch (cause) {
    if ((cause as { code?: unknown }).code !== 'ERR_MODULE_NOT_FOUND') throw cause;
    throw new KafkaSourceError(
      'TWG_KAFKA_CLIENT_UNSUPPORTED',
      'platformaticConsumer needs @platformatic/kafka, an optional peer dependency of ' +
        '@thalweg/source-kafka: install @platformatic/kafka@^2.12.1 beside it',
      { cause },
    );
  }
}

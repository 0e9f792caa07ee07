import { KafkaSourceError } from './errors.js';
import { platformaticSupported } from './platformatic-runtime.js';

/** The client module, loaded on first use so that kafkajs users never load it. */
export type PlatformaticModule = typeof import('@platformatic/kafka');

/**
 * Loads @platformatic/kafka, or refuses by name on a runtime it cannot run
 * on, instead of letting a TypeError surface from inside the client; thalweg
 * does not patch the global it lacks.
 */
export async function loadPlatformatic(): Promise<PlatformaticModule> {
  if (!platformaticSupported()) {
    throw new KafkaSourceError(
      'TWG_KAFKA_CLIENT_UNSUPPORTED',
      `@platformatic/kafka needs Node 22.22+ or 24.6+ and this is Node ${process.versions.node}; ` +
        'use the default client (kafkajs) on this runtime',
    );
  }
  return import('@platformatic/kafka');
}

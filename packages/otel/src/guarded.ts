import { diag } from '@opentelemetry/api';

/**
 * A channel listener that cannot throw. Node rethrows a subscriber's
 * exception as an uncaught one, which would end the process: telemetry
 * must never stop ingest, so a fault here goes to OpenTelemetry's own
 * diagnostic logger (`diag`), as the SDK reports its own faults.
 */
export function guarded<M>(what: string, listener: (message: M) => void): (message: M) => void {
  return (message) => {
    try {
      listener(message);
    } catch (error) {
      diag.error(`@thalweg/otel: ${what} failed`, error);
    }
  };
}

import { MissingServiceError } from './service-env.js';

/** Where the Pulsar integration tests reach the broker (set by `scripts/services/pulsar.sh up`). */
export interface PulsarEndpoint {
  /** Binary protocol service URL, `pulsar://host:port`. */
  readonly url: string;
  /** Base of the WebSocket API, `ws://host:port` (endpoints under `/ws/v2/...`). */
  readonly wsUrl: string;
  /** Base of the admin REST API, `http://host:port` (endpoints under `/admin/v2/...`). */
  readonly adminUrl: string;
}

function required(variable: string): string {
  const value = process.env[variable];
  if (value === undefined || value === '') throw new MissingServiceError(variable, 'Pulsar');
  return value;
}

/** The Pulsar broker the tests may create topics and subscriptions on. */
export function pulsar(): PulsarEndpoint {
  return {
    url: required('THALWEG_PULSAR_URL'),
    wsUrl: required('THALWEG_PULSAR_WS_URL'),
    adminUrl: required('THALWEG_PULSAR_ADMIN_URL'),
  };
}

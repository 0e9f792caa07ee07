import { fileURLToPath } from 'node:url';
import { MissingServiceError } from './service-env.js';

/**
 * Where the Arrow Flight integration tests reach the test server that
 * `scripts/services/flight.sh up` started (pyarrow's own Flight server, the
 * peer our Flight client, source and sink are checked against).
 */
export interface FlightService {
  /** `grpc://host:port` of the Flight server. */
  readonly url: string;
  /**
   * A Python with pyarrow, to spawn the test-side peers with: see
   * {@link flightScript} (`ipc_producer.py`, `read_back.py`, `serve.py`).
   */
  readonly python: string;
}

function required(variable: string): string {
  const value = process.env[variable];
  if (value === undefined || value === '') throw new MissingServiceError(variable, 'Arrow Flight');
  return value;
}

/** The Flight test server, and the Python that runs its peers. */
export function flight(): FlightService {
  return { url: required('THALWEG_FLIGHT_URL'), python: required('THALWEG_FLIGHT_PYTHON') };
}

/** The Python scripts of `scripts/services/flight/` a test may run with {@link FlightService.python}. */
export type FlightScript = 'serve.py' | 'ipc_producer.py' | 'read_back.py';

/**
 * Absolute path of one of the Flight peer scripts. This file sits three
 * levels below the repository root both as source (`src/`) and built
 * (`dist/`), so one relative path serves both.
 */
export function flightScript(name: FlightScript): string {
  return fileURLToPath(new URL(`../../../scripts/services/flight/${name}`, import.meta.url));
}

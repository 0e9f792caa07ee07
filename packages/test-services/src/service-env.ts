/**
 * Integration tests read their endpoints from THALWEG_* variables, set either
 * by `eval "$(pnpm services:up)"` (the repo's own services on loopback) or
 * by the user to point at services of their own. A missing variable is a
 * failure with the fix in the message, never a skipped test.
 */
export class MissingServiceError extends Error {
  constructor(variable: string, service: string) {
    super(
      `${variable} is not set, so the ${service} integration tests have nothing to run against. ` +
        `Run \`eval "$(pnpm services:up)"\` first (pnpm test:all does), ` +
        `or set ${variable} to a ${service} of your own.`,
    );
    this.name = 'MissingServiceError';
  }
}

function required(variable: string, service: string): string {
  const value = process.env[variable];
  if (value === undefined || value === '') throw new MissingServiceError(variable, service);
  return value;
}

/** `postgres://user@host:port/db` of a PostgreSQL the tests may create tables in. */
export function postgresUrl(): string {
  return required('THALWEG_PG_URL', 'PostgreSQL');
}

/** Bootstrap brokers of a Kafka cluster, as `host:port` strings. */
export function kafkaBrokers(): string[] {
  return required('THALWEG_KAFKA_BROKERS', 'Kafka')
    .split(',')
    .map((b) => b.trim())
    .filter((b) => b.length > 0);
}

export interface S3Endpoint {
  readonly endpoint: string;
  readonly region: string;
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
}

/** An S3-compatible endpoint that honours conditional writes (If-None-Match, If-Match). */
export function s3Endpoint(): S3Endpoint {
  return {
    endpoint: required('THALWEG_S3_ENDPOINT', 'S3'),
    region: required('THALWEG_S3_REGION', 'S3'),
    accessKeyId: required('THALWEG_S3_ACCESS_KEY', 'S3'),
    secretAccessKey: required('THALWEG_S3_SECRET_KEY', 'S3'),
  };
}

export interface PrometheusService {
  /** Base URL of its HTTP API, e.g. `http://127.0.0.1:29090`. */
  readonly url: string;
  /**
   * The directory its `file_sd_configs` watch: a test registers an endpoint
   * it serves by writing `[{"targets": ["host:port"]}]` to a `*.json` file
   * of its own there (and removes it when done). It is scraped every second.
   */
  readonly targetsDir: string;
  /** Path of the `promtool` binary that goes with it. */
  readonly promtool: string;
}

/** A Prometheus server that scrapes the targets a test writes into `targetsDir`. */
export function prometheus(): PrometheusService {
  return {
    url: required('THALWEG_PROMETHEUS_URL', 'Prometheus'),
    targetsDir: required('THALWEG_PROMETHEUS_TARGETS', 'Prometheus'),
    promtool: required('THALWEG_PROMTOOL', 'Prometheus'),
  };
}

import type { HealthReport } from './health-report.js';

export type HealthProbe = 'live' | 'ready';

export interface HealthResponse {
  readonly status: 200 | 503;
  readonly headers: { readonly 'content-type': 'application/json; charset=utf-8' };
  readonly body: string;
}

/**
 * Maps a report to what an HTTP probe returns, so an embedding service can
 * serve `/live` and `/ready` with whatever server it already runs (a
 * `node:http` handler is three lines) while core stays free of I/O.
 */
export function healthResponse(report: HealthReport, probe: HealthProbe): HealthResponse {
  const result = probe === 'live' ? report.live : report.ready;
  const body = {
    probe,
    status: result.ok ? 'pass' : 'fail',
    failures: result.ok ? [] : result.failures,
    detail: report.detail,
  };
  return {
    status: result.ok ? 200 : 503,
    headers: { 'content-type': 'application/json; charset=utf-8' },
    body: JSON.stringify(body),
  };
}

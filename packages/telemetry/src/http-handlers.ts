import type { IncomingMessage, ServerResponse } from 'node:http';
import { healthResponse, type HealthProbe } from '@thalweg/connector-core';
import { collectMetrics } from './collect.js';
import type { Observed } from './observed.js';
import { PROMETHEUS_CONTENT_TYPE, prometheusText } from './prometheus-text.js';

export type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** The three endpoints, each a plain `node:http` handler, and a router over them. */
export interface TelemetryHandlers {
  /** 200 while the process makes progress; 503 only on a genuine deadlock (the stuck detector). */
  readonly live: Handler;
  /** 200 when started and neither paused by backpressure nor stuck. */
  readonly ready: Handler;
  /** The Prometheus text exposition of every catalog metric. */
  readonly metrics: Handler;
  /**
   * Serves `/live`, `/ready` and `/metrics` under `prefix` and returns true,
   * or returns false without touching `res` for any other path, so it
   * mounts into a server that serves other routes too.
   */
  handle(req: IncomingMessage, res: ServerResponse): boolean;
}

export interface TelemetryHandlerOptions {
  /** A path prefix the routes sit under (`/thalweg` serves `/thalweg/metrics`); none by default. */
  readonly prefix?: string;
}

export function telemetryHandlers(
  observed: Observed,
  options: TelemetryHandlerOptions = {},
): TelemetryHandlers {
  const probe =
    (which: HealthProbe): Handler =>
    (req, res) => {
      if (!allowed(req, res)) return;
      const r = healthResponse(observed.health(), which);
      res.writeHead(r.status, r.headers);
      res.end(req.method === 'HEAD' ? undefined : r.body);
    };
  const metrics: Handler = (req, res) => {
    if (!allowed(req, res)) return;
    let body: string;
    try {
      body = prometheusText(collectMetrics(observed));
    } catch (error) {
      res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
      res.end(
        `collecting metrics failed: ${error instanceof Error ? error.message : String(error)}\n`,
      );
      return;
    }
    res.writeHead(200, { 'content-type': PROMETHEUS_CONTENT_TYPE });
    res.end(req.method === 'HEAD' ? undefined : body);
  };
  const live = probe('live');
  const ready = probe('ready');
  const prefix = options.prefix ?? '';
  const routes = new Map<string, Handler>([
    [`${prefix}/live`, live],
    [`${prefix}/ready`, ready],
    [`${prefix}/metrics`, metrics],
  ]);
  return {
    live,
    ready,
    metrics,
    handle(req, res) {
      const path = (req.url ?? '/').split('?', 1)[0] ?? '/';
      const route = routes.get(path);
      if (route === undefined) return false;
      route(req, res);
      return true;
    },
  };
}

function allowed(req: IncomingMessage, res: ServerResponse): boolean {
  if (req.method === 'GET' || req.method === 'HEAD') return true;
  res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' });
  res.end(`${req.method ?? 'this method'} is not allowed: use GET\n`);
  return false;
}

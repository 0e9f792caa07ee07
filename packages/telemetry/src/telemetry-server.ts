import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { telemetryHandlers, type TelemetryHandlerOptions } from './http-handlers.js';
import type { Observed } from './observed.js';

export interface TelemetryServerOptions extends TelemetryHandlerOptions {
  /** 0 (the default) takes a free port; read it back from `port`. */
  readonly port?: number;
  /** Loopback by default: exposing the endpoints beyond the host is the user's choice. */
  readonly host?: string;
}

/** A listening server for `/live`, `/ready` and `/metrics`. */
export interface TelemetryServer {
  readonly port: number;
  /** `http://host:port` (add `/metrics`, `/live` or `/ready`). */
  readonly url: string;
  /** Stops accepting connections and closes idle ones; resolves once closed. */
  close(): Promise<void>;
}

/**
 * Serves the telemetry endpoints on a small server of their own, for a
 * service that has none; a service with its own server mounts
 * `telemetryHandlers(...).handle` into it instead. Any other path is a 404.
 */
export async function serveTelemetry(
  observed: Observed,
  options: TelemetryServerOptions = {},
): Promise<TelemetryServer> {
  const handlers = telemetryHandlers(observed, options);
  const server: Server = createServer((req, res) => {
    if (handlers.handle(req, res)) return;
    res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' });
    res.end('not found: try /metrics, /live or /ready\n');
  });
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const shown = host.includes(':') ? `[${host}]` : host;
  return {
    port,
    url: `http://${shown}:${String(port)}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error === undefined ? resolve() : reject(error)));
        server.closeIdleConnections();
      }),
  };
}

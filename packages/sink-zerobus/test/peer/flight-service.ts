import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadPackageDefinition, type ServiceDefinition } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';

/** FlightData as proto-loader decodes it (bytes as Buffers, defaults filled in). */
export interface FlightData {
  readonly data_header: Buffer;
  readonly app_metadata: Buffer;
  readonly data_body: Buffer;
}

export interface PutResult {
  readonly app_metadata: Buffer;
}

/**
 * The package root, found from this file whether it runs from test/ (vitest)
 * or from dist-test/test/ (the compiled bench): the .proto file is not
 * copied by tsc, so it is always read from the source tree.
 */
function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error('flight.proto: no package.json above the peer');
    dir = up;
  }
  return dir;
}

let cached: ServiceDefinition | null = null;

/** `arrow.flight.protocol.FlightService`, loaded from test/peer/flight.proto. */
export function flightService(): ServiceDefinition {
  if (cached !== null) return cached;
  const definition = loadSync(join(packageRoot(), 'test', 'peer', 'flight.proto'), {
    keepCase: true,
    defaults: true,
  });
  const loaded = loadPackageDefinition(definition);
  // Walks the generated namespace (arrow.flight.protocol) whose shape the proto file fixes.
  const namespace = (loaded['arrow'] as Record<string, Record<string, Record<string, unknown>>>)[
    'flight'
  ]?.['protocol'];
  const ctor = namespace?.['FlightService'] as { service?: ServiceDefinition } | undefined;
  if (ctor?.service === undefined) throw new Error('flight.proto: FlightService not found');
  cached = ctor.service;
  return cached;
}

import { PulsarSourceError } from './errors.js';

/** A topic's full name split into the parts the REST and WebSocket paths take. */
export interface TopicName {
  readonly tenant: string;
  readonly namespace: string;
  readonly local: string;
  /** `persistent/tenant/ns/name`, each part URL-encoded: the tail of `/admin/v2/…` and `/ws/v2/<kind>/…`. */
  readonly path: string;
}

const SEGMENT = /^[^/\s]+$/;

/** Splits `persistent://tenant/ns/name`; anything else is refused with TWG_PULSAR_TOPIC_INVALID naming it. */
export function parseTopic(topic: string): TopicName {
  const match = /^persistent:\/\/([^/]*)\/([^/]*)\/(.*)$/.exec(topic);
  const parts = match?.slice(1) ?? [];
  if (match === null || !parts.every((p) => SEGMENT.test(p))) {
    throw new PulsarSourceError(
      'TWG_PULSAR_TOPIC_INVALID',
      `topic ${JSON.stringify(topic)} is not a full persistent topic name (persistent://tenant/namespace/name)`,
    );
  }
  const [tenant = '', namespace = '', local = ''] = parts;
  return {
    tenant,
    namespace,
    local,
    path: ['persistent', tenant, namespace, local].map(encodeURIComponent).join('/'),
  };
}

/** The `reason` of a Pulsar REST error body, or the body itself. */
function reasonOf(body: string): string {
  try {
    const parsed = JSON.parse(body) as { reason?: unknown };
    if (typeof parsed.reason === 'string') return parsed.reason;
  } catch {
    // not JSON: the body as it came
  }
  return body.slice(0, 300);
}

/**
 * How many partitions `topic` has (0: a plain topic), from
 * `GET /admin/v2/persistent/{tenant}/{ns}/{topic}/partitions`. Pulsar 4.0
 * answers 404 there for a topic that is neither partitioned nor a plain
 * topic, and for a missing namespace: TWG_PULSAR_TOPIC_UNKNOWN. No answer
 * within `timeoutMs`, or any other status, is TWG_PULSAR_BROKER_UNREACHABLE
 * with the URL.
 */
export async function partitionCount(
  adminUrl: string,
  topic: string,
  timeoutMs: number,
): Promise<number> {
  const name = parseTopic(topic);
  const url = `${adminUrl.replace(/\/+$/, '')}/admin/v2/${name.path}/partitions`;
  let status: number;
  let body: string;
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    status = res.status;
    body = await res.text();
  } catch (cause) {
    const why = (cause as { cause?: { message?: string } }).cause?.message ?? String(cause);
    throw new PulsarSourceError(
      'TWG_PULSAR_BROKER_UNREACHABLE',
      `could not reach the Pulsar admin API at ${url} within ${String(timeoutMs)} ms: ${why}`,
      { cause },
    );
  }
  if (status === 404) {
    throw new PulsarSourceError(
      'TWG_PULSAR_TOPIC_UNKNOWN',
      `topic ${topic} does not exist (${reasonOf(body)})`,
    );
  }
  if (status !== 200) {
    throw new PulsarSourceError(
      'TWG_PULSAR_BROKER_UNREACHABLE',
      `the Pulsar admin API answered ${url} with HTTP ${String(status)}: ${reasonOf(body)}`,
    );
  }
  let partitions: unknown;
  try {
    partitions = (JSON.parse(body) as { partitions?: unknown }).partitions;
  } catch {
    partitions = undefined;
  }
  if (typeof partitions !== 'number' || !Number.isInteger(partitions) || partitions < 0) {
    throw new PulsarSourceError(
      'TWG_PULSAR_BROKER_UNREACHABLE',
      `the Pulsar admin API answered ${url} without a partition count: ${body.slice(0, 300)}`,
    );
  }
  return partitions;
}

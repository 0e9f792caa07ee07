import { MissingServiceError } from './service-env.js';

/** Where the coordination integration tests reach etcd (set by `scripts/services/etcd.sh up`). */
export interface EtcdCluster {
  /** Client URLs of every member, `http://host:port`, in member order. */
  readonly endpoints: string[];
}

/**
 * The etcd cluster the tests may write keys to (three members on loopback
 * when the repo's script started it). Fault tests stop and start members
 * with `scripts/services/etcd.sh kill-member N` / `start-member N`.
 */
export function etcd(): EtcdCluster {
  const value = process.env['THALWEG_ETCD_ENDPOINTS'];
  if (value === undefined || value === '') {
    throw new MissingServiceError('THALWEG_ETCD_ENDPOINTS', 'etcd');
  }
  return {
    endpoints: value
      .split(',')
      .map((e) => e.trim())
      .filter((e) => e.length > 0),
  };
}

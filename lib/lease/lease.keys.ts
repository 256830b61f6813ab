import type { LeaseSettings } from './lease.settings.js';

/** The Redis keys of one lease namespace. */
export interface LeaseKeys {
  meta: string;
  cursor: string;
  expiry: string;
  /** Prefix of the per-ID hashes: `<recordPrefix><id>`. */
  recordPrefix: string;
}

/**
 * All keys of a namespace share one hash tag, so that a Redis Cluster keeps them on one slot and the scripts stay
 * atomic. With a fixed datacenter ID the datacenter is part of the tag: one Redis can then serve several
 * datacenters, each handing out its own worker IDs.
 */
export function leaseKeys(
  settings: Pick<LeaseSettings, 'namespace' | 'allocateDatacenter'>,
  datacenterId: number,
): LeaseKeys {
  const tag = settings.allocateDatacenter ? settings.namespace : `${settings.namespace}:dc${datacenterId}`;
  const base = `snowflake:{${tag}}:`;
  return { meta: `${base}meta`, cursor: `${base}cursor`, expiry: `${base}expiry`, recordPrefix: `${base}w:` };
}

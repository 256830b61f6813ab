import type { LoggerService } from '@nestjs/common';
import { withTimeout } from './lease.client.js';
import type { LeaseSettings } from '../lease.settings.js';

type Timing = Pick<LeaseSettings, 'ttlMs' | 'renewIntervalMs' | 'fenceMarginMs'>;

/**
 * What a Redis Cluster adds to a promotion beyond its node timeout: the failure reports of a majority of primaries
 * reaching each other by gossip, and the replica's election delay (500 ms plus up to 500 ms at random for the
 * best-ranked replica) and vote.
 */
export const CLUSTER_ELECTION_MS = 1000;

/**
 * How long a namespace's slot may go without a primary and cost no holder its ID: a holder's last confirmed
 * renewal came at most one renew interval before the outage began, and after it the holder takes its ID back into
 * the promoted replica's data only while its lease's expiry lies more than the fence margin ahead of the new
 * server's time (the recovery rule). Beyond it the holders fence, the namespace settles and they claim again.
 */
export function promotionWindowMs(timing: Timing): number {
  return timing.ttlMs - timing.renewIntervalMs - timing.fenceMarginMs;
}

/**
 * The longest an unplanned promotion takes with a given `cluster-node-timeout`: a primary is marked failing after up
 * to 1.5 node timeouts (no answer to a ping within one, pings at least every half), rounded up to two, then the
 * election.
 */
export function promotionBoundMs(nodeTimeoutMs: number): number {
  return 2 * nodeTimeoutMs + CLUSTER_ELECTION_MS;
}

/** The largest `cluster-node-timeout` whose promotions fit the window, in whole hundreds of ms; 0 when none fits. */
export function recommendedNodeTimeoutMs(timing: Timing): number {
  const fits = (promotionWindowMs(timing) - CLUSTER_ELECTION_MS) / 2;
  return Math.max(0, Math.floor(fits / 100) * 100);
}

/** The warning for a node timeout too long for the lease, or undefined when promotions fit its window. */
export function nodeTimeoutAdvice(nodeTimeoutMs: number, timing: Timing): string | undefined {
  const window = promotionWindowMs(timing);
  const bound = promotionBoundMs(nodeTimeoutMs);
  if (bound <= window) return undefined;
  const recommended = recommendedNodeTimeoutMs(timing);
  const fix =
    recommended >= 500
      ? `set cluster-node-timeout to ${recommended} ms or less`
      : 'raise redis.ttlMs (up to 10000 ms), then set cluster-node-timeout to fit';
  return (
    `cluster-node-timeout is ${nodeTimeoutMs} ms: a promotion after a primary fails can take up to ` +
    `${bound} ms (2 node timeouts and the election), longer than the ${window} ms within which the lease's holders ` +
    `take their IDs back on the promoted replica (redis.ttlMs ${timing.ttlMs} - renewIntervalMs ` +
    `${timing.renewIntervalMs} - fenceMarginMs ${timing.fenceMarginMs}). Each unplanned failover may then stop ` +
    `every holder for the settling after a loss (12 s) and a re-claim; no ID is issued twice either way. To keep ` +
    `IDs flowing through failovers, ${fix}.`
  );
}

/** The part of an ioredis `Cluster` the check uses. */
interface ClusterLike {
  isCluster: true;
  nodes(role: 'master'): { call(command: string, ...args: string[]): Promise<unknown> }[];
}

function isCluster(client: unknown): client is ClusterLike {
  const candidate = client as Partial<ClusterLike> | undefined;
  return candidate?.isCluster === true && typeof candidate.nodes === 'function';
}

/**
 * With an ioredis Cluster client: reads `cluster-node-timeout` from the primaries (the longest one found) and warns
 * when promotions may outlast the lease's window. Where CONFIG is not allowed (a managed Redis, a renamed command) or
 * a primary does not answer within `connectTimeoutMs`, it says so at debug level and checks what it could read.
 */
export async function checkClusterTiming(
  client: unknown,
  settings: Timing & Pick<LeaseSettings, 'connectTimeoutMs'>,
  logger: LoggerService,
): Promise<void> {
  if (!isCluster(client)) return;
  const readings = await Promise.all(
    client.nodes('master').map(async (node) => {
      try {
        const reply = (await withTimeout(
          node.call('CONFIG', 'GET', 'cluster-node-timeout'),
          settings.connectTimeoutMs,
          'CONFIG GET cluster-node-timeout',
        )) as string[];
        const value = Number(reply?.[1]);
        return Number.isFinite(value) && value > 0 ? value : undefined;
      } catch (error) {
        logger.debug?.(`cluster-node-timeout not readable (${String(error)}): its fit with redis.ttlMs is not checked`);
        return undefined;
      }
    }),
  );
  const found = readings.filter((value): value is number => value !== undefined);
  if (found.length === 0) return;
  const advice = nodeTimeoutAdvice(Math.max(...found), settings);
  if (advice !== undefined) logger.warn(advice);
}

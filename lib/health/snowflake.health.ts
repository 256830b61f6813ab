import { Injectable } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { HealthIndicatorService, type HealthIndicatorResult } from '@nestjs/terminus';
import type { IdService, SnowflakeStatus } from '../module/id.service.js';
import { findRegistry, type SnowflakeRegistry } from '../module/snowflake.registry.js';

/**
 * Thresholds of {@link SnowflakeHealthIndicator.isHealthy}.
 *
 * @publicApi
 */
export interface SnowflakeHealthOptions {
  /**
   * With the fence near (see `minFenceInMs`), how many failed renewals in a row make the reason `renewals-failing`
   * rather than `lease-lapsing`. Failed renewals alone, while the fence is far, keep the indicator up: IDs still flow.
   * @default 2
   */
  maxRenewalFailures?: number;
  /**
   * Down when the lease would fence itself within this many milliseconds unless a renewal succeeds. While renewals
   * succeed the fence stays at least `lowestFenceInMs` ahead (ttl - fence margin - renew interval: 55 % of the TTL
   * with the defaults); the default, half of that, is reached only when renewals have been missing for a while.
   * @default half the lease's `lowestFenceInMs` (2750 ms with the default 10 s TTL)
   */
  minFenceInMs?: number;
  /**
   * Down while the clock stands more than this many milliseconds behind the timestamp the generator must exceed (its
   * last issued timestamp, or the previous lease holder's ceiling).
   * @default 0
   */
  maxClockBehindMs?: number;
  /**
   * The name of the registration to check (`SnowflakeModule.forRoot({ name })`), when the app has several.
   * @default the default registration
   */
  generator?: string;
  /** The service to check, given directly; takes precedence over `generator`. @default the IdService of the app */
  idService?: IdService;
}

/**
 * Why the indicator reports down.
 *
 * @publicApi
 */
export type SnowflakeDownReason =
  | 'not-configured'
  | 'no-worker-id'
  | 'settling'
  | 'lease-not-held'
  | 'lease-lapsing'
  | 'renewals-failing'
  | 'clock-out-of-sync'
  | 'clock-behind';

/**
 * A terminus health indicator for the ID generator and its worker-ID lease. It reads `IdService.status()` only: a
 * health check never talks to Redis itself, so a slow Redis cannot make the check hang.
 *
 * Up while IDs can be issued and the lease is confirmed with margin to spare; down when no worker ID is held, the lease
 * is fenced, lost or about to be, renewals keep failing, or the clock stands behind the timestamp it must exceed. Both
 * carry the worker, the lease and the generator's counters; down adds `reason` and `message`.
 *
 * Provide it through {@link SnowflakeHealthModule} (or in a module that imports `TerminusModule`).
 *
 * @example
 * ```ts
 * @Get('health')
 * @HealthCheck()
 * check() {
 *   return this.health.check([() => this.snowflake.isHealthy()]);
 * }
 * ```
 *
 * @publicApi
 */
@Injectable()
export class SnowflakeHealthIndicator {
  private registry: SnowflakeRegistry | undefined;

  constructor(
    private readonly healthIndicatorService: HealthIndicatorService,
    private readonly moduleRef: ModuleRef,
  ) {}

  /**
   * The health of the ID generator under `key`.
   *
   * @param key the key in the health check result @default 'snowflake'
   * @example this.snowflake.isHealthy('orders-ids', { generator: 'orders' })
   */
  isHealthy<const Key extends string = 'snowflake'>(
    key: Key = 'snowflake' as Key,
    options: SnowflakeHealthOptions = {},
  ): HealthIndicatorResult<Key> {
    const indicator = this.healthIndicatorService.check(key);
    const service = options.idService ?? this.idService(options.generator);
    if (service === undefined) {
      const names = this.registry?.names() ?? [];
      return indicator.down({
        reason: 'not-configured' satisfies SnowflakeDownReason,
        message:
          names.length === 0
            ? 'No IdService in the application: import SnowflakeModule.forRoot(…) or forRootAsync(…).'
            : `No SnowflakeModule registration named ${JSON.stringify(options.generator ?? 'default')} in the ` +
              `application; it registers ${names.map((name) => JSON.stringify(name)).join(', ')}.`,
      });
    }
    const status = service.status();
    const details = describe(status);
    const down = downReason(status, options);
    return down === undefined ? indicator.up(details) : indicator.down({ ...details, ...down });
  }

  /** Found lazily and across modules, so that SnowflakeModule need not be global for the indicator to see it. */
  private idService(generator: string | undefined): IdService | undefined {
    this.registry ??= findRegistry(this.moduleRef);
    return this.registry?.get(generator);
  }
}

function downReason(
  status: SnowflakeStatus,
  options: SnowflakeHealthOptions,
): { reason: SnowflakeDownReason; message: string } | undefined {
  const maxRenewalFailures = options.maxRenewalFailures ?? 2;
  const maxClockBehindMs = options.maxClockBehindMs ?? 0;
  const { lease } = status;
  const minFenceInMs = options.minFenceInMs ?? (lease === undefined ? 0 : lease.lowestFenceInMs / 2);

  if (lease !== undefined && lease.state === 'settling') {
    return {
      reason: 'settling',
      message:
        `Redis may have lost the data of namespace "${lease.namespace}" (restart, failover, flush, rollback or deleted ` +
        'keys), and this ' +
        `instance could not take its worker ID back in time: it claims one once the namespace has settled, in ` +
        `${lease.settlingInMs ?? '?'} ms.`,
    };
  }
  if (lease !== undefined && lease.state !== 'held') {
    return {
      reason: 'lease-not-held',
      message: `The worker-ID lease is ${lease.state}: no IDs are issued until a claim succeeds.${lastError(status)}`,
    };
  }
  if (lease !== undefined && !lease.clockInSync) {
    return {
      reason: 'clock-out-of-sync',
      message:
        `The wall clock stands ${lease.clockOffsetMs ?? '?'} ms (± ${lease.clockErrorMs ?? '?'} ms) from the Redis ` +
        `server's clock, beyond ${lease.maxClockOffsetMs} ms: no IDs are issued until they agree. Check NTP.`,
    };
  }
  if (!status.ready || status.workerId === null) {
    return { reason: 'no-worker-id', message: 'No worker ID is held: IDs cannot be issued.' };
  }
  // Down means "this instance cannot issue IDs (soon)": failed renewals alone are a blip the lease rides out (they
  // show in the details); they make the indicator go down only once the fence is near, and then they say why.
  if (lease !== undefined && (lease.fenceInMs === null || lease.fenceInMs <= minFenceInMs)) {
    if (lease.renewalFailures >= maxRenewalFailures && lease.fenceInMs !== null && lease.fenceInMs > 0) {
      return {
        reason: 'renewals-failing',
        message:
          `${lease.renewalFailures} lease renewals failed in a row, and the lease fences itself in ` +
          `${lease.fenceInMs} ms unless one succeeds.${lastError(status)}`,
      };
    }
    return {
      reason: 'lease-lapsing',
      message:
        lease.fenceInMs !== null && lease.fenceInMs > 0
          ? `The worker-ID lease fences itself in ${lease.fenceInMs} ms unless a renewal succeeds.${lastError(status)}`
          : `The worker-ID lease lapsed: it could not be renewed in time.${lastError(status)}`,
    };
  }
  // A namespace low on free worker IDs (capacity.low in the details, and a warning in the log) is not a down reason:
  // this instance holds its ID and issues. Taking it out of rotation would shed capacity exactly when the fleet is
  // largest, and it would not free the ID for anyone. The instance that cannot start is the one that reports it.
  if (status.clockBehindMs > maxClockBehindMs) {
    return {
      reason: 'clock-behind',
      message:
        `The clock stands ${status.clockBehindMs} ms behind the timestamp IDs must exceed (the last issued one or the ` +
        "previous holder's ceiling): IDs wait for the clock to catch up.",
    };
  }
  return undefined;
}

function lastError(status: SnowflakeStatus): string {
  const error = status.lease?.lastError;
  return error ? ` Last error: ${error}` : '';
}

/** Plain JSON values only: health results are serialised as they are. */
function describe(status: SnowflakeStatus): Record<string, unknown> {
  const { lease } = status;
  return {
    source: status.source,
    workerId: status.workerId,
    datacenterId: status.datacenterId,
    ...(lease === undefined
      ? {}
      : {
          namespace: lease.namespace,
          leaseState: lease.state,
          // expiresAt is in the module's clock, which a test (or an app) may inject: measure it against that clock.
          leaseExpiresInMs: lease.expiresAt === null ? null : Math.round(lease.expiresAt - status.nowMs),
          fenceInMs: lease.fenceInMs === null ? null : Math.round(lease.fenceInMs),
          lastRenewalAt: lease.lastRenewalAt === null ? null : new Date(lease.lastRenewalAt).toISOString(),
          renewalFailures: lease.renewalFailures,
          clockOffsetMs: lease.clockOffsetMs,
          clockErrorMs: lease.clockErrorMs,
          maxClockOffsetMs: lease.maxClockOffsetMs,
          clockInSync: lease.clockInSync,
          settlingInMs: lease.settlingInMs,
          switches: lease.switches,
          capacity:
            lease.capacity === null
              ? null
              : { ...lease.capacity, checkedAt: new Date(lease.capacity.checkedAt).toISOString() },
          lowCapacityAtFree: lease.lowCapacityAtFree,
        }),
    issued: status.issued,
    overflowWaits: status.overflowWaits,
    clockBackEvents: status.clockBackEvents,
    clockBehindMs: status.clockBehindMs,
  };
}

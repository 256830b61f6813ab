import type { LoggerService } from '@nestjs/common';
import type { Clocks } from '../core/clock.js';
import { WorkerUnavailableError } from '../core/errors.js';
import type { Layout } from '../core/layout.js';
import type { Sleeper } from './async-tools.js';
import { LeaseConnectionError } from './redis/lease.client.js';
import {
  ClockOutOfSyncError,
  LeaseConfigMismatchError,
  LeaseExhaustedError,
  LeaseLayoutChangeError,
  RedisUnavailableError,
} from './lease.errors.js';
import { LAYOUT_CHANGE_MAX_WAIT_MS } from './lease.contract.js';
import { floorWaitMs, freeWaitMs, leaseBackoff } from './lease.math.js';
import { noneFreeOpening } from './lease.messages.js';
import type { HeldLease } from './lease.phase.js';
import { describeLoss, type ClaimRound, type LeaseRounds } from './lease.rounds.js';
import type { LeaseSettings } from './lease.settings.js';
import type { ServerClock } from './server-clock.js';

/** The ID a holder lost while the namespace settled, and the token it held it by (its claim is handed it first). */
export interface PriorLease {
  id: number;
  token: string;
}

/** What the claim loop needs from the lease that runs it. */
export interface ClaimHost {
  readonly rounds: LeaseRounds;
  readonly settings: LeaseSettings;
  readonly layout: Layout;
  readonly clocks: Clocks;
  readonly logger: LoggerService;
  readonly sleeper: Sleeper;
  readonly serverClock: ServerClock;
  isStopped(): boolean;
  /** Told when the namespace settles (monotonic end) and when a claim got past it (null). */
  settling(untilMono: number | null): void;
  /** Told of every failure, for `status().lastError`. */
  failed(error: string): void;
  /** The generator's last timestamp (holder ms, -1 for none) while `lease` is current, -1 otherwise. */
  lastMsOf(lease: HeldLease): number;
}

/**
 * Claims a worker ID, retrying failures up to `attempts` times (Infinity at run time: Redis may come back), waiting
 * while the namespace settles and for the clock to pass the previous holder's ceiling (or this process's own last
 * timestamp under that ID, whichever is higher). Resolves with a confirmed lease whose floor the clock has passed.
 * `prior` names the ID lost in a data loss, reserved for this instance for a while (see the renewal script).
 */
export async function claimLease(
  host: ClaimHost,
  excluded: readonly number[],
  attempts: number,
  prior?: PriorLease,
): Promise<HeldLease> {
  const { settings, logger } = host;
  const backoff = leaseBackoff(settings);
  let skip = [...excluded];
  /** The reservation after a loss, named until a reply past the settling shows it is not this claim's (any more). */
  let reserved = prior;
  let excludedDropped = false;
  /** Monotonic ms of the first reply that found every ID held, while waiting for one to become free. */
  let fullSince: number | undefined;
  const fail = async (error: string, final: () => Error): Promise<void> => {
    host.failed(error);
    const waitMs = backoff.next();
    if (backoff.failuresInARow >= attempts) throw final();
    logger.warn(`Claiming a worker ID failed (${error}); retrying in ${waitMs} ms`);
    await host.sleeper.sleep(waitMs);
  };
  for (;;) {
    if (host.isStopped()) throw new WorkerUnavailableError('stopped');
    let round: ClaimRound;
    try {
      round = await host.rounds.claim(skip, reserved);
    } catch (error) {
      const text = message(error);
      const advice = error instanceof LeaseConnectionError ? error.advice : undefined;
      const final = () => new RedisUnavailableError(settings.namespace, backoff.failuresInARow, text, advice);
      // Wrong credentials, an unknown host or a missing permission do not pass by retrying.
      if (error instanceof LeaseConnectionError && !error.transient) {
        host.failed(text);
        backoff.next();
        throw final();
      }
      await fail(text, final);
      continue;
    }
    const { reply } = round;
    if (reply.kind === 'settling') {
      host.settling(host.clocks.monotonicNow() + reply.waitMs);
      // Asks again at least every renew interval: a loss during the wait starts settling anew, and while nobody holds
      // a lease only a script sees it (a new marker), so the wait ends 12 s after the last loss, not later.
      await host.sleeper.sleep(Math.min(reply.waitMs + 5, settings.renewIntervalMs));
      continue;
    }
    host.settling(null);
    // The reserved ID is handed out at once, or after the time rule's wait; any other reply means it is not ours.
    if (reserved !== undefined && reply.kind !== 'wait' && !(reply.kind === 'ok' && reply.id === reserved.id)) {
      reserved = undefined;
    }
    // Passed-over live IDs at the cursor, or another ID to name: claim again at once.
    if (reply.kind === 'busy' || reply.kind === 'retry') continue;
    if (reply.kind === 'wait') {
      // A free ID lost its record: it is handed out once its last holder's IDs are covered by the time rule.
      await host.sleeper.sleep(reply.waitMs + 5);
      continue;
    }
    if (reply.kind === 'mismatch') {
      throw new LeaseConfigMismatchError(
        settings.namespace,
        reply.recorded,
        settings.config,
        reply.live,
        reply.heldBack,
      );
    }
    if (reply.kind === 'layout') {
      if (reply.waitMs > LAYOUT_CHANGE_MAX_WAIT_MS) {
        throw new LeaseLayoutChangeError(settings.namespace, reply.recorded, settings.config, reply.waitMs);
      }
      logger.log(
        `Namespace "${settings.namespace}" issued IDs under another layout; this instance's IDs pass them in ` +
          `${reply.waitMs} ms: claiming then`,
      );
      await host.sleeper.sleep(reply.waitMs + 5);
      continue;
    }
    if (reply.kind === 'exhausted') {
      if (!excludedDropped && excluded.length > 0) {
        // No other ID is free: take the one we switched away from back. Its record holds our exact last timestamp,
        // so it waits (bounded by maxFloorWaitMs) for the clock to pass it, like any reused ID.
        excludedDropped = true;
        logger.warn(
          `No other worker ID of namespace "${settings.namespace}" is free; claiming worker ID ` +
            `${excluded.join(', ')} again, above its last timestamp`,
        );
        skip = skip.filter((id) => !excluded.includes(id));
        continue;
      }
      const mono = host.clocks.monotonicNow();
      if (fullSince === undefined) {
        fullSince = mono;
        logFull(host, reply.held, skip.length, reply.soonestExpiry - reply.serverMs);
      }
      const waitedMs = Math.round(mono - fullSince);
      const leftMs = settings.waitForFreeWorkerIdMs - waitedMs;
      if (leftMs <= 0) {
        throw new LeaseExhaustedError(settings.namespace, reply.held, settings.idCount, skip.length, waitedMs);
      }
      const pause = { minMs: Math.min(settings.retryBackoffMs, 50), pollMs: settings.renewIntervalMs };
      await host.sleeper.sleep(freeWaitMs(reply.soonestExpiry, reply.serverMs, leftMs, pause));
      continue;
    }
    if (fullSince !== undefined) {
      logger.log(
        `A worker ID of namespace "${settings.namespace}" became free after ` +
          `${Math.round(host.clocks.monotonicNow() - fullSince)} ms; claiming it`,
      );
      fullSince = undefined;
    }
    const lease = host.rounds.toLease({ ...round, reply }, (held) => host.lastMsOf(held));
    const giveBack = async (): Promise<void> => {
      await host.rounds.release(lease, lease.floorMs ?? -1).catch(() => undefined);
      lease.untrack(-1);
    };
    const offset = clockRefusal(host.serverClock);
    if (offset !== undefined) {
      await giveBack();
      await fail(
        `clock offset ${Math.round(offset.offsetMs)} ms ± ${Math.ceil(offset.errorMs)} ms beyond ` +
          `redis.maxClockOffsetMs (${settings.maxClockOffsetMs} ms)`,
        () => new ClockOutOfSyncError(settings.namespace, offset.offsetMs, offset.errorMs, offset.boundMs),
      );
      continue;
    }
    const floorWait = floorWaitMs(lease.floorMs, host.clocks.now(), host.layout);
    if (floorWait > settings.maxFloorWaitMs) {
      logger.warn(
        `Worker ID ${lease.workerId}'s previous holder issued up to ${new Date(lease.floorMs!).toISOString()}, ` +
          `${floorWait} ms ahead of this clock; taking another ID`,
      );
      await giveBack();
      skip.push(lease.id);
      continue;
    }
    const unconfirmed = await host.rounds.confirmClaim(reply);
    if (unconfirmed !== undefined) {
      await giveBack();
      await fail(unconfirmed, () => new RedisUnavailableError(settings.namespace, backoff.failuresInARow, unconfirmed));
      continue;
    }
    if (floorWait > 0) {
      logger.log(`Waiting ${floorWait} ms for the clock to pass worker ID ${lease.workerId}'s previous ceiling`);
      if (!(await waitForFloor(host, lease, floorWait))) {
        lease.untrack(-1);
        continue;
      }
    }
    return lease;
  }
}

/**
 * Waits `waitMs` for the clock to pass a claimed lease's floor, renewing the lease as it goes: a wait longer than
 * the TTL must neither let the ID lapse to someone else nor hand the generator a lease that is about to fence.
 * Returns false when the lease was lost meanwhile (claim again). On shutdown it releases the lease, keeping the
 * inherited ceiling, and throws.
 */
async function waitForFloor(host: ClaimHost, lease: HeldLease, waitMs: number): Promise<boolean> {
  const { clocks, settings, logger } = host;
  const until = clocks.monotonicNow() + waitMs;
  for (;;) {
    const left = until - clocks.monotonicNow();
    if (left <= 0) return true;
    await host.sleeper.sleep(Math.min(left, settings.renewIntervalMs));
    if (host.isStopped()) {
      await host.rounds.release(lease, lease.floorMs ?? -1).catch(() => undefined);
      throw new WorkerUnavailableError('stopped');
    }
    if (clocks.monotonicNow() < lease.fenceAt - settings.renewIntervalMs) continue;
    try {
      const outcome = await host.rounds.extend(lease, lease.floorMs ?? -1);
      if (outcome.kind === 'lost') {
        logger.warn(
          `Worker ID ${lease.workerId} was lost while waiting for its floor (${describeLoss(outcome.reason)}); claiming again`,
        );
        return false;
      }
    } catch (error) {
      // Not confirmed: the lease may lapse. Nothing was issued under it, so claiming afresh is safe; give it back if
      // the backend answers, so that the ID is not held for a TTL under a token nobody uses.
      host.failed(message(error));
      logger.warn(
        `Renewing worker ID ${lease.workerId} while waiting for its floor failed (${message(error)}); claiming again`,
      );
      await host.rounds.release(lease, lease.floorMs ?? -1).catch(() => undefined);
      return false;
    }
  }
}

/**
 * Says once, when a claim first finds every ID held, that it waits, how long at most and why: in a rolling deploy
 * with surge the new instances start before the old ones stop, and each old one's release frees an ID.
 */
function logFull(host: ClaimHost, held: number, passedOver: number, soonestInMs: number): void {
  const { settings, logger } = host;
  const upTo = `${settings.waitForFreeWorkerIdMs} ms (redis.waitForFreeWorkerIdMs)`;
  if (held < settings.idCount) {
    // The others are passed over: by this instance (IDs whose last holder issued too far ahead of its clock), or,
    // after a Redis data loss, reserved for the instances that held them until the claim script's grace ends.
    const passed =
      passedOver > 0 ? `passed over by this instance (${passedOver}: last used too far ahead of its clock) or ` : '';
    logger.warn(
      `${noneFreeOpening(settings.namespace, held, settings.idCount)} are held, and the others are ${passed}reserved ` +
        'for the instances that held them before a Redis data loss; ' +
        `waiting up to ${upTo} for one to be released or to expire` +
        `${soonestInMs >= 0 ? ` (the soonest is free in ${soonestInMs} ms)` : ''}`,
    );
    return;
  }
  logger.warn(
    `All ${settings.idCount} worker IDs of namespace "${settings.namespace}" are held (${held} live leases); ` +
      `waiting up to ${upTo} for one to be released or to expire` +
      `${soonestInMs >= 0 ? ` (the soonest lease lapses in ${soonestInMs} ms unless renewed)` : ''}, as in ` +
      'a rolling deploy with surge that starts new instances before the old ones stop',
  );
}

/** Undefined when the last round trip's clock agrees with the server's; else what was measured. */
function clockRefusal(serverClock: ServerClock): { offsetMs: number; errorMs: number; boundMs: number } | undefined {
  const offsetMs = serverClock.lastOffsetMs ?? 0;
  const errorMs = serverClock.lastErrorMs ?? 0;
  if (serverClock.accepts(offsetMs, errorMs)) return undefined;
  return { offsetMs, errorMs, boundMs: serverClock.boundMs };
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

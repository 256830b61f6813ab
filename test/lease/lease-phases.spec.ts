/**
 * Every transition of the lease's phase machine on fake time, against the lease rules in memory: fast, exact about
 * when things happen, and free of Redis. The real-Redis suites (lease, holes, replication) prove the same rules
 * against Redis itself.
 */
import { SETTLE_AFTER_LOSS_MS } from '../../lib/lease/lease.contract.js';
import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { WorkerUnavailableError, WorkerWaitTimeoutError } from '../../lib/core/errors.js';
import { SnowflakeGenerator } from '../../lib/core/generator.js';
import { resolveLayout } from '../../lib/core/layout.js';
import { RedisWorkerSource } from '../../lib/lease/redis-worker.source.js';
import { resolveLeaseSettings } from '../../lib/lease/lease.settings.js';
import { IdService } from '../../lib/module/id.service.js';
import { WorkerBinding } from '../../lib/worker/worker-binding.js';
import { MemoryLeaseBackend } from '../support/memory-lease-backend.js';
import { SteppableClock } from '../support/time.js';

const TTL = 3000;
const RETRY = 100;
const START = Date.UTC(2026, 10, 23, 12);
let namespaces = 0;

const quiet = { log: () => undefined, warn: () => undefined, error: () => undefined };

async function leased(idCount = 4, maxAsyncWaitMs?: number) {
  jest.useFakeTimers({ now: START });
  const layout = resolveLayout({ workerBits: 2 });
  const settings = resolveLeaseSettings({ url: 'redis://unused', ttlMs: TTL, retryBackoffMs: RETRY }, layout);
  const backend = new MemoryLeaseBackend(idCount, TTL, `phases-${++namespaces}`);
  const clock = new SteppableClock();
  const source = new RedisWorkerSource(settings, 0, () => Promise.resolve(backend));
  const generator = new SnowflakeGenerator({ layout, clock, clockBackToleranceMs: settings.clockBackToleranceMs });
  const ids = new IdService(new WorkerBinding(generator, source, layout, clock, quiet, true, maxAsyncWaitMs));
  await ids.onModuleInit();
  /** The reason `next()` is refused now, or undefined when it issues. */
  const refusal = (): string | undefined => {
    try {
      ids.next();
      return undefined;
    } catch (error) {
      if (error instanceof WorkerUnavailableError) return error.reason;
      throw error;
    }
  };
  /** Advances fake time in steps of `stepMs`, calling `each` after every step. */
  const run = async (ms: number, each: () => void = () => undefined, stepMs = 10): Promise<void> => {
    for (let t = 0; t < ms; t += stepMs) {
      await jest.advanceTimersByTimeAsync(stepMs);
      each();
    }
  };
  return { ids, backend, clock, settings, refusal, run, source };
}

afterEach(() => {
  jest.useRealTimers();
});

describe('the lease phase machine, on fake time', () => {
  it('fences at ttl - margin after the last confirmed renewal, and not a moment before', async () => {
    const { backend, settings, refusal, run, ids } = await leased();
    backend.down = true;
    const fenceAt = TTL - settings.fenceMarginMs;
    await run(fenceAt - 10);
    expect(refusal()).toBeUndefined();
    await run(10);
    expect(refusal()).toBe('fenced');
    expect(ids.status().lease?.state).toBe('fenced');
    await ids.onApplicationShutdown();
  });

  it('retries failed renewals with one back-off, doubling up to the renew interval, and recovers', async () => {
    const { backend, settings, refusal, run, ids } = await leased();
    await run(settings.renewIntervalMs - 10);
    backend.down = true;
    const attempts: number[] = [];
    let seen = backend.calls.renew;
    let elapsed = 0;
    await run(3500, () => {
      elapsed += 10;
      if (backend.calls.renew > seen) {
        seen = backend.calls.renew;
        attempts.push(elapsed);
      }
    });
    const gaps = attempts.slice(1).map((t, i) => t - attempts[i]);
    expect(gaps.slice(0, 4)).toEqual([RETRY, 2 * RETRY, 4 * RETRY, settings.renewIntervalMs]);
    expect(ids.status().lease?.renewalFailures).toBe(attempts.length);
    backend.down = false;
    await run(settings.renewIntervalMs + 10);
    expect(refusal()).toBeUndefined();
    expect(ids.status().lease).toMatchObject({ state: 'held', renewalFailures: 0, lastError: null });
    await ids.onApplicationShutdown();
  });

  it('renews at once, not at the next tick, when the clock runs away from the ceiling and the server', async () => {
    const { backend, clock, refusal, run, ids } = await leased();
    await run(100);
    const before = backend.calls.renew;
    // The whole machine's clock, Redis's included, jumps by more than a TTL.
    clock.step(10 * TTL);
    backend.serverSkewMs += 10 * TTL;
    expect(refusal()).toBe('clock');
    await run(10);
    expect(backend.calls.renew).toBe(before + 1);
    expect(refusal()).toBeUndefined();
    await ids.onApplicationShutdown();
  });

  it('takes its worker ID back after Redis lost its data, with no refused next()', async () => {
    const { backend, refusal, run, ids } = await leased();
    const workerId = ids.workerId;
    const refused: string[] = [];
    const issue = () => {
      const reason = refusal();
      if (reason !== undefined) refused.push(reason);
    };
    await run(500, issue);
    backend.loseData();
    await run(2 * TTL, issue);
    expect(refused).toEqual([]);
    expect(ids.workerId).toBe(workerId);
    expect(ids.status().lease?.state).toBe('held');
    await ids.onApplicationShutdown();
  });

  it('after an outage past its lease and a data loss, re-claims after settling and stays above its own IDs', async () => {
    const { backend, run, ids, refusal } = await leased(1);
    const issued: bigint[] = [];
    const issue = () => {
      try {
        issued.push(ids.next());
      } catch (error) {
        if (!(error instanceof WorkerUnavailableError)) throw error;
      }
    };
    await run(500, issue);
    backend.down = true;
    await run(TTL + 500, issue);
    expect(refusal()).toBe('fenced');
    backend.loseData();
    backend.down = false;
    const before = issued.length;
    await run(SETTLE_AFTER_LOSS_MS + 2 * TTL, issue);
    expect(ids.status().lease?.state).toBe('held');
    expect(issued.length).toBeGreaterThan(before);
    for (let i = 1; i < issued.length; i++) expect(issued[i]).toBeGreaterThan(issued[i - 1]);
    await ids.onApplicationShutdown();
  });

  it('switches worker ID when the clock steps back beyond the tolerance, releasing the old one at its last ms', async () => {
    const { backend, clock, run, ids, refusal, settings } = await leased();
    await run(200, () => ids.next());
    const oldId = ids.workerId;
    const lastMs = ids.status().lastTimestampMs!;
    // The machine's clock, Redis's included, steps back: the holder first sees its clock away from the server's
    // projected one, renews at once to measure again, and then the generator sees the step back.
    clock.step(-(settings.clockBackToleranceMs + 1000));
    backend.serverSkewMs -= settings.clockBackToleranceMs + 1000;
    expect(refusal()).toBe('clock');
    await run(10);
    expect(refusal()).toBe('switching');
    await run(20);
    expect(ids.workerId).not.toBe(oldId);
    expect(refusal()).toBeUndefined();
    expect(backend.ceilingOf(oldId)).toBe(lastMs);
    await ids.onApplicationShutdown();
  });

  it('stops issuing once a renewal measures the server clock beyond maxClockOffsetMs', async () => {
    const { backend, run, ids, refusal, settings } = await leased();
    backend.serverSkewMs = settings.maxClockOffsetMs + 50;
    expect(refusal()).toBeUndefined();
    await run(settings.renewIntervalMs + 10);
    expect(refusal()).toBe('clock');
    expect(ids.status().lease?.clockInSync).toBe(false);
    await ids.onApplicationShutdown();
  });

  it('stops at once when a renewal finds the lease taken, and claims another ID', async () => {
    const { backend, run, ids, refusal, settings } = await leased();
    const oldId = ids.workerId;
    backend.steal(oldId);
    await run(settings.renewIntervalMs - 10);
    expect(refusal()).toBeUndefined();
    await run(10);
    await run(10);
    expect(ids.workerId).not.toBe(oldId);
    expect(refusal()).toBeUndefined();
    expect(ids.status().lease?.switches).toBe(1);
    await ids.onApplicationShutdown();
  });

  it("says 'lost', not 'switching', while a lost lease's note waits for Redis", async () => {
    const { backend, run, ids, refusal, settings } = await leased();
    backend.steal(ids.workerId);
    backend.notesDown = true;
    await run(settings.renewIntervalMs + 20);
    expect(refusal()).toBe('lost');
    expect(ids.status().lease?.state).toBe('lost');
    backend.notesDown = false;
    await run(settings.renewIntervalMs);
    expect(refusal()).toBeUndefined();
    await ids.onApplicationShutdown();
  });

  it('renews again at once when a renewal was confirmed only after its fence time', async () => {
    const { backend, run, ids, refusal, settings } = await leased();
    // The next renewal's reply takes longer than ttl - margin: confirmed, but the fence counted from the send has passed.
    backend.latencyMs = TTL - settings.fenceMarginMs + 200;
    await run(settings.renewIntervalMs + backend.latencyMs - 100);
    backend.latencyMs = 0;
    await run(200);
    expect(refusal()).toBeUndefined();
    expect(ids.status().lease?.state).toBe('held');
    await ids.onApplicationShutdown();
  });
});

describe('a claim on a full namespace, on fake time', () => {
  /** A namespace of two IDs, both held by holders that died right after claiming (they never renew). */
  async function full(waitForFreeWorkerIdMs: number) {
    jest.useFakeTimers({ now: START });
    const layout = resolveLayout({ workerBits: 1 });
    const settings = resolveLeaseSettings(
      { url: 'redis://unused', ttlMs: TTL, retryBackoffMs: RETRY, waitForFreeWorkerIdMs },
      layout,
    );
    const backend = new MemoryLeaseBackend(2, TTL, `full-${++namespaces}`);
    await backend.claim({ token: 'dead-0', holderNowMs: START, excluded: [], candidate: 0 });
    await jest.advanceTimersByTimeAsync(400);
    await backend.claim({ token: 'dead-1', holderNowMs: START + 400, excluded: [], candidate: 0 });
    const clock = new SteppableClock();
    const source = new RedisWorkerSource(settings, 0, () => Promise.resolve(backend));
    const generator = new SnowflakeGenerator({ layout, clock, clockBackToleranceMs: settings.clockBackToleranceMs });
    const ids = new IdService(new WorkerBinding(generator, source, layout, clock, quiet));
    const claimsBefore = backend.calls.claim;
    const started = Date.now();
    const boot = ids.onModuleInit().then(
      () => ({ ok: true as const, at: Date.now() - started }),
      (error: unknown) => ({ ok: false as const, at: Date.now() - started, error }),
    );
    return { ids, backend, boot, claimsBefore, settings };
  }

  it('waits for the soonest expiry, asking again every renew interval, and boots on the ID that lapses first', async () => {
    const { ids, backend, boot, claimsBefore, settings } = await full(2 * TTL);
    await jest.advanceTimersByTimeAsync(2 * TTL);
    const outcome = await boot;
    expect(outcome.ok).toBe(true);
    // dead-0's lease lapses TTL - 400 ms after the wait began, plus the 5 ms the wait adds past an expiry.
    expect(outcome.at).toBeGreaterThanOrEqual(TTL - 400);
    expect(outcome.at).toBeLessThanOrEqual(TTL - 400 + 10);
    expect(ids.workerId).toBe(0);
    // Asked at the start, then at most every renew interval, and once more after the expiry.
    const asked = backend.calls.claim - claimsBefore;
    expect(asked).toBe(Math.ceil((TTL - 400) / settings.renewIntervalMs) + 1);
    // Renewals since then counted the other dead holder's lease lapsing too.
    expect(ids.status().lease!.capacity).toMatchObject({ size: 2, held: 1, free: 1, low: true });
    await ids.onApplicationShutdown();
  });

  it('fails with LeaseExhaustedError once the bound has passed, not before', async () => {
    const bound = TTL / 2;
    const { boot } = await full(bound);
    await jest.advanceTimersByTimeAsync(2 * TTL);
    const outcome = await boot;
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(outcome.error).toMatchObject({ name: 'LeaseExhaustedError', waitedMs: bound, held: 2, capacity: 2 });
    expect(outcome.at).toBe(bound);
  });
});

/** A promise's outcome and when it came (fake ms after `settled()` was called), without an unhandled rejection. */
function settled<T>(promise: Promise<T>) {
  const started = Date.now();
  const outcome: { done: boolean; at?: number; value?: T; error?: unknown } = { done: false };
  promise.then(
    (value) => Object.assign(outcome, { done: true, at: Date.now() - started, value }),
    (error: unknown) => Object.assign(outcome, { done: true, at: Date.now() - started, error }),
  );
  return outcome;
}

describe('bounded waits for a worker ID (maxAsyncWaitMs, timeoutMs, signal), on fake time', () => {
  const BOUND = 1000;

  async function fenced(idCount = 4) {
    const leaseOf = await leased(idCount, BOUND);
    leaseOf.backend.down = true;
    await leaseOf.run(TTL);
    expect(leaseOf.refusal()).toBe('fenced');
    return leaseOf;
  }

  it('rejects nextAsync() at maxAsyncWaitMs, naming the lease state, its last error and the time waited', async () => {
    const { run, ids } = await fenced();
    const outcome = settled(ids.nextAsync());
    await run(BOUND - 20);
    expect(outcome.done).toBe(false);
    await run(40);
    expect(outcome.done).toBe(true);
    expect(outcome.at).toBeGreaterThanOrEqual(BOUND);
    expect(outcome.at).toBeLessThanOrEqual(BOUND + 20);
    const error = outcome.error as WorkerWaitTimeoutError;
    expect(error).toBeInstanceOf(WorkerWaitTimeoutError);
    expect(error).toBeInstanceOf(WorkerUnavailableError);
    expect(error).toMatchObject({ reason: 'timeout', state: 'fenced', limitMs: BOUND, limitFrom: 'maxAsyncWaitMs' });
    expect(error).toMatchObject({ status: 503, statusCode: 503, expose: false });
    expect(error.waitedMs).toBeGreaterThanOrEqual(BOUND);
    expect(error.waitedMs).toBeLessThanOrEqual(BOUND + 20);
    expect(error.lastError).toBe('connection refused (test)');
    expect(error.message).toMatch(
      /^No worker ID could be used within the wait bound \(waited 10\d\d ms of `maxAsyncWaitMs` 1000 ms; worker ID fenced: /,
    );
    expect(error.message).toMatch(/could not be renewed in time, \d+ renewals failed in a row, Redis unreachable/);
    await ids.onApplicationShutdown();
  });

  it('answers within the bound once the lease renews again, and a per-call timeoutMs replaces the bound', async () => {
    const { backend, run, ids } = await fenced();
    const short = settled(ids.nextAsync({ timeoutMs: 200 }));
    const long = settled(ids.nextAsync({ timeoutMs: 60_000 }));
    await run(300);
    expect(short.error).toMatchObject({ reason: 'timeout', limitMs: 200, limitFrom: 'timeoutMs' });
    backend.down = false;
    await run(BOUND);
    expect(typeof long.value).toBe('bigint');
    expect(long.at).toBeLessThan(300 + BOUND);
    expect(await ids.nextAsync()).toBeGreaterThan(long.value!);
    await ids.onApplicationShutdown();
  });

  it('bounds nextBatchAsync() over the whole batch', async () => {
    const { run, ids } = await fenced();
    const batch = settled(ids.nextBatchAsync(10));
    await run(BOUND + 20);
    expect(batch.error).toMatchObject({ reason: 'timeout', state: 'fenced' });
    await ids.onApplicationShutdown();
  });

  it("ends the wait at once with the signal's reason, and refuses a signal aborted already", async () => {
    const { run, ids, source } = await fenced();
    const controller = new AbortController();
    const waiting = settled(ids.nextAsync({ signal: controller.signal }));
    await run(100);
    const reason = new Error('the client went away');
    controller.abort(reason);
    await run(10);
    expect(waiting.error).toBe(reason);
    expect(waiting.at).toBeLessThanOrEqual(120);
    // The lease keeps no waiter for a caller that left.
    expect((source as unknown as { waiters: { size: number } }).waiters.size).toBe(0);
    await expect(ids.nextAsync({ signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    await expect(ids.nextBatchAsync(3, { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    await ids.onApplicationShutdown();
  });

  it('rejects an aborted signal before issuing, even while the lease is held', async () => {
    const { ids } = await leased(4, BOUND);
    const issued = ids.status().issued;
    await expect(ids.nextAsync({ signal: AbortSignal.abort() })).rejects.toMatchObject({ name: 'AbortError' });
    expect(ids.status().issued).toBe(issued);
    await expect(ids.nextAsync({ timeoutMs: -1 })).rejects.toThrow(/`timeoutMs`: expected a non-negative number/);
    await ids.onApplicationShutdown();
  });

  it('says how long a settling namespace has left, as the retry hint', async () => {
    const { backend, run, ids } = await fenced(1);
    backend.loseData();
    backend.down = false;
    await run(2 * TTL);
    expect(ids.status().lease?.state).toBe('settling');
    const outcome = settled(ids.nextAsync());
    await run(BOUND + 20);
    const error = outcome.error as WorkerWaitTimeoutError;
    expect(error).toMatchObject({ reason: 'timeout', state: 'settling' });
    const left = ids.status().lease!.settlingInMs!;
    expect(error.retryAfterMs).toBeGreaterThanOrEqual(left);
    expect(error.retryAfterMs).toBeLessThanOrEqual(left + BOUND);
    expect(error.message).toMatch(/settling after Redis lost its data/);
    await ids.onApplicationShutdown();
  });
});

/**
 * The lease's renewal listeners, on fake time against the lease rules in memory: each renewal round trip reaches
 * every listener with its outcome, duration and cause; a listener that throws changes nothing for the lease or the
 * other listeners; a removed listener hears nothing more. The same hook on a real redis-server is proven by the
 * metrics suite (test/metrics).
 */
import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { resolveLayout } from '../../lib/core/layout.js';
import { resolveLeaseSettings } from '../../lib/lease/lease.settings.js';
import { RedisWorkerSource } from '../../lib/lease/redis-worker.source.js';
import { observesRenewals, type LeaseRenewalSample } from '../../lib/lease/renewal-observers.js';
import { SnowflakeGenerator } from '../../lib/core/generator.js';
import { IdService } from '../../lib/module/id.service.js';
import { WorkerBinding } from '../../lib/worker/worker-binding.js';
import { MemoryLeaseBackend } from '../support/memory-lease-backend.js';
import { SteppableClock } from '../support/time.js';

const TTL = 3000;
const START = Date.UTC(2026, 10, 24, 12);
const warnings: string[] = [];
const logger = { log: () => undefined, warn: (text: string) => void warnings.push(text), error: () => undefined };

async function leased() {
  jest.useFakeTimers({ now: START });
  const layout = resolveLayout({ workerBits: 2 });
  const settings = resolveLeaseSettings({ url: 'redis://unused', ttlMs: TTL, retryBackoffMs: 100 }, layout);
  const backend = new MemoryLeaseBackend(4, TTL, `observers-${Math.random()}`);
  const clock = new SteppableClock();
  const source = new RedisWorkerSource(settings, 0, () => Promise.resolve(backend));
  const generator = new SnowflakeGenerator({ layout, clock, clockBackToleranceMs: settings.clockBackToleranceMs });
  const ids = new IdService(new WorkerBinding(generator, source, layout, clock, logger));
  await ids.onModuleInit();
  return { ids, backend, source, settings };
}

afterEach(() => {
  jest.useRealTimers();
  warnings.length = 0;
});

describe('lease renewal listeners', () => {
  it('hears every renewal with its outcome, duration and worker ID, and nothing once removed', async () => {
    const { ids, source, settings } = await leased();
    expect(observesRenewals(source)).toBe(true);
    const samples: LeaseRenewalSample[] = [];
    const remove = source.onRenewal((sample) => samples.push(sample));

    await jest.advanceTimersByTimeAsync(3 * settings.renewIntervalMs + 10);
    expect(samples).toHaveLength(3);
    for (const sample of samples) {
      expect(sample).toEqual({
        outcome: 'renewed',
        durationMs: expect.any(Number),
        cause: null,
        workerId: ids.workerId,
      });
      expect(sample.durationMs).toBeGreaterThanOrEqual(0);
    }

    remove();
    await jest.advanceTimersByTimeAsync(2 * settings.renewIntervalMs);
    expect(samples).toHaveLength(3);
    expect(ids.status().lease?.state).toBe('held');
    await ids.onApplicationShutdown();
  });

  it('reports failed round trips with their cause, and a loss with its reason', async () => {
    const { ids, backend, source, settings } = await leased();
    const samples: LeaseRenewalSample[] = [];
    source.onRenewal((sample) => samples.push(sample));

    backend.down = true;
    await jest.advanceTimersByTimeAsync(settings.renewIntervalMs + 10);
    expect(samples.at(-1)).toMatchObject({ outcome: 'failed', cause: expect.stringMatching(/^[A-Z_]+$/) });
    backend.down = false;

    backend.steal(ids.workerId);
    await jest.advanceTimersByTimeAsync(settings.renewIntervalMs + 10);
    expect(samples.some((s) => s.outcome === 'lost' && s.cause === 'taken')).toBe(true);
    await ids.onApplicationShutdown();
  });

  it('keeps renewing, and calling the other listeners, when one listener throws', async () => {
    const { ids, source, settings } = await leased();
    const heard: string[] = [];
    source.onRenewal(() => {
      throw new Error('listener bug');
    });
    source.onRenewal((sample) => heard.push(sample.outcome));

    await jest.advanceTimersByTimeAsync(3 * settings.renewIntervalMs + 10);
    expect(heard).toEqual(['renewed', 'renewed', 'renewed']);
    expect(ids.status().lease).toMatchObject({ state: 'held', renewalFailures: 0, lastError: null });
    expect(warnings.filter((w) => w.includes('listener bug'))).toHaveLength(3);
    await ids.onApplicationShutdown();
  });
});

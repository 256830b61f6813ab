/**
 * What the claim loop says when no worker ID is free for it: that every ID is held, or that some are passed over by
 * this instance or reserved for the instances that held them before a Redis data loss (a stub host answers the
 * claims; the scripts' own replies are tested against redis-server in lease.scripts and reservation).
 */
import { describe, expect, it } from '@jest/globals';
import { resolveLayout } from '../../lib/core/layout.js';
import { claimLease, type ClaimHost } from '../../lib/lease/claim-loop.js';
import { LeaseExhaustedError } from '../../lib/lease/lease.errors.js';
import type { CapacityGauge } from '../../lib/lease/capacity-gauge.js';
import type { LeaseBackend } from '../../lib/lease/lease.backend.js';
import { LeaseRounds } from '../../lib/lease/lease.rounds.js';
import type { ServerClock } from '../../lib/lease/server-clock.js';
import { resolveLeaseSettings } from '../../lib/lease/lease.settings.js';

/** Claims against a namespace of 4 IDs that answers `exhausted` with `held` live leases, and returns the warnings. */
async function warningsWhenFull(held: number): Promise<string[]> {
  return (await claimWhenFull(held)).warnings;
}

/** The same claim: the warnings and the error it ends with. */
async function claimWhenFull(held: number): Promise<{ warnings: string[]; error: unknown }> {
  const layout = resolveLayout({ workerBits: 2 });
  const settings = resolveLeaseSettings({ url: 'redis://unused', namespace: 'full', waitForFreeWorkerIdMs: 0 }, layout);
  const warnings: string[] = [];
  const rounds = {
    claim: () =>
      Promise.resolve({
        reply: { kind: 'exhausted', held, soonestExpiry: 2_500, serverMs: 1_000, runId: 'r', replId: '' },
        token: 't',
        holderNowMs: 1_000,
        sentMono: 0,
      }),
  } as unknown as LeaseRounds;
  const host = {
    rounds,
    settings,
    layout,
    clocks: { now: () => 1_000, monotonicNow: () => 0 },
    logger: { log: () => undefined, error: () => undefined, warn: (line: string) => void warnings.push(line) },
    sleeper: { sleep: () => Promise.resolve() },
    isStopped: () => false,
    settling: () => undefined,
    failed: () => undefined,
    lastMsOf: () => -1,
  } as unknown as ClaimHost;
  const error = await claimLease(host, [], 1).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(LeaseExhaustedError);
  return { warnings, error };
}

describe('the claim loop, on a namespace with no ID free for it', () => {
  it('says that every ID is held when every ID is', async () => {
    const [line] = await warningsWhenFull(4);
    expect(line).toContain('All 4 worker IDs of namespace "full" are held (4 live leases)');
    expect(line).toContain('the soonest lease lapses in 1500 ms');
  });

  it('says that the others are reserved after a data loss when fewer are held', async () => {
    const [line] = await warningsWhenFull(2);
    expect(line).toContain('No worker ID of namespace "full" is free for this instance: 2 of 4 are held');
    expect(line).toContain('reserved for the instances that held them before a Redis data loss');
    expect(line).not.toContain('All 4');
  });

  it('fails, when the wait runs out, with an error that says the same', async () => {
    const { message } = (await claimWhenFull(2)).error as Error;
    expect(message).toContain('No worker ID of namespace "full" is free for this instance: 2 of 4 are held');
    expect(message).toContain('the rest are reserved for the instances that held them before a Redis data loss');
    expect((await claimWhenFull(4)).error).toMatchObject({
      message: expect.stringContaining('All 4 worker IDs of namespace "full" are held (4 live leases)'),
    });
  });
});

describe('the claim rounds, naming a candidate', () => {
  it('after a `wait` for the ID a reply named, names it again as named by a reply (with a spread pick)', async () => {
    const layout = resolveLayout({ workerBits: 2 });
    const settings = resolveLeaseSettings({ url: 'redis://unused', namespace: 'rounds' }, layout);
    const stamp = { serverMs: 1_000, runId: 'r', replId: '' };
    const replies = [
      { kind: 'retry', candidate: 2, ...stamp },
      { kind: 'wait', waitMs: 100, ...stamp },
      { kind: 'retry', candidate: 3, ...stamp },
    ];
    const sent: { candidate: number; spread?: number }[] = [];
    const backend = {
      claim: (request: { candidate: number; spread?: number }) => {
        sent.push({ candidate: request.candidate, spread: request.spread });
        return Promise.resolve(replies.shift());
      },
    } as unknown as LeaseBackend;
    const rounds = new LeaseRounds(
      backend,
      { observe: () => undefined } as unknown as ServerClock,
      { now: () => 1_000, monotonicNow: () => 0 },
      settings,
      layout,
      0,
      { observe: () => undefined } as unknown as CapacityGauge,
      () => 0.5,
    );
    for (let i = 0; i < 3; i++) await rounds.claim([]);
    expect(sent[0]).toEqual({ candidate: 0, spread: undefined });
    expect(sent[1]).toEqual({ candidate: 2, spread: 2 ** 30 });
    // The ID the reply named, again, still with a pick: the script takes it if it is still free.
    expect(sent[2]).toEqual({ candidate: 2, spread: 2 ** 30 });
  });
});

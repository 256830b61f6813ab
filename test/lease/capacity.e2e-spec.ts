import 'reflect-metadata';
import { jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { Redis } from 'ioredis';
import { execFile } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { resolveLayout } from '../../lib/core/layout.js';
import { IdService, LeaseExhaustedError, SnowflakeModule, type LeaseCapacity } from '../../lib/index.js';
import { leaseKeys } from '../../lib/lease/lease.keys.js';
import { LeaseProtocol } from '../../lib/lease/redis/lease.protocol.js';
import { CLAIM_SCRIPT } from '../../lib/lease/redis/lease.scripts.js';
import { resolveLeaseSettings } from '../../lib/lease/lease.settings.js';
import { sleep, waitUntil } from '../support/time.js';
import { settledSharedNamespace, sharedRedisUrl } from '../support/shared-redis.js';

/** Two worker bits: a namespace of four IDs, filled by a handful of holders. */
const LAYOUT = { timestampBits: 41, datacenterBits: 0, workerBits: 2, sequenceBits: 12 } as const;
const TTL = 2000;
/** The default renew interval (ttl / 4): how soon a holder's count follows a change. */
const RENEW_MS = TTL / 4;

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** The built CLI, as an operator runs it. */
function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const { NODE_OPTIONS: _jestFlags, ...env } = process.env;
  return new Promise((done) => {
    execFile(
      process.execPath,
      [join(root, 'dist/cli/main.js'), ...args],
      { cwd: root, env, timeout: 30_000 },
      (e, o, s) => done({ code: e === null ? 0 : ((e as { code?: number }).code ?? -1), stdout: o, stderr: s }),
    );
  });
}

describe('lease capacity: held and free worker IDs, and a bounded wait on a full namespace (real redis-server)', () => {
  let url: string;
  let admin: Redis;
  const modules: TestingModule[] = [];
  let namespace: string;
  let warn: ReturnType<typeof jest.spyOn>;
  let log: ReturnType<typeof jest.spyOn>;

  beforeAll(async () => {
    url = sharedRedisUrl();
    admin = new Redis(url);
  });

  afterAll(async () => {
    admin.disconnect();
  });

  beforeEach(async () => {
    ({ namespace } = await settledSharedNamespace('cap'));
    warn = jest.spyOn(Logger.prototype, 'warn');
    log = jest.spyOn(Logger.prototype, 'log');
  });

  afterEach(async () => {
    warn.mockRestore();
    log.mockRestore();
    await Promise.all(modules.splice(0).map((m) => m.close().catch(() => undefined)));
  });

  async function boot(redis: Record<string, unknown> = {}): Promise<IdService> {
    const module = await Test.createTestingModule({
      imports: [SnowflakeModule.forRoot({ layout: LAYOUT, redis: { url, namespace, ttlMs: TTL, ...redis } })],
    }).compile();
    modules.push(module);
    await module.init();
    return module.get(IdService);
  }

  /**
   * A holder that claims through the real claim script and never renews: a process killed with SIGKILL right after
   * its claim. Its lease lapses one TTL later. Returns the ID and the claim's expiry (server ms).
   */
  async function claimAndDie(): Promise<{ id: number; expiry: number; ceiling: number }> {
    const settings = resolveLeaseSettings({ client: admin, namespace, ttlMs: TTL }, resolveLayout(LAYOUT));
    const protocol = new LeaseProtocol(leaseKeys(settings, 0), settings);
    let candidate = 0;
    for (;;) {
      const args = protocol.claimArgs({
        token: `dead-${Math.random()}`,
        holderNowMs: Date.now(),
        host: 'gone',
        pid: 1,
        excluded: [],
        candidate,
      });
      const reply = LeaseProtocol.decodeClaim(
        (await admin.eval(CLAIM_SCRIPT, 4, ...protocol.scriptKeys(candidate), ...args)) as unknown[],
      );
      if (reply.kind === 'settling') {
        await sleep(reply.waitMs + 5);
        continue;
      }
      if (reply.kind === 'retry') {
        candidate = reply.candidate;
        continue;
      }
      if (reply.kind !== 'ok') throw new Error(`claim: ${JSON.stringify(reply)}`);
      const record = await admin.hgetall(protocol.recordKey(reply.id));
      return { id: reply.id, expiry: reply.expiry, ceiling: Number(record.ceiling) };
    }
  }

  const capacityOf = (ids: IdService): LeaseCapacity => ids.status().lease!.capacity!;
  /** Waits for the holder's next renewal to count `held`. */
  const heldCount = (ids: IdService, held: number) =>
    waitUntil(
      () => ids.status().lease?.capacity?.held === held,
      3 * RENEW_MS + 1000,
      `${held} held`,
      () => JSON.stringify(ids.status().lease?.capacity),
    );
  const warned = (text: string) =>
    warn.mock.calls.filter(([message]: unknown[]) => String(message).includes(text)).length;
  const logged = (text: string) =>
    log.mock.calls.filter(([message]: unknown[]) => String(message).includes(text)).length;

  it('counts held and free IDs at the claim and at each renewal, after claims, releases and expiries', async () => {
    const a = await boot();
    const claimed = capacityOf(a);
    expect(claimed).toMatchObject({ size: 4, held: 1, free: 3, low: false });
    expect(Math.abs(claimed.checkedAt - Date.now())).toBeLessThan(1000);
    expect(a.status().lease!.lowCapacityAtFree).toBe(1);

    const b = await boot();
    expect(capacityOf(b)).toMatchObject({ held: 2, free: 2 });
    await heldCount(a, 2);

    // Two holders that die at once: counted while their leases live, free again once they lapse.
    const dead = [await claimAndDie(), await claimAndDie()];
    await heldCount(a, 4);
    expect(capacityOf(a)).toMatchObject({ held: 4, free: 0, low: true });
    await waitUntil(() => capacityOf(a).held === 2, TTL + 3 * RENEW_MS + 1000, 'the dead leases to lapse');
    expect(Date.now()).toBeGreaterThan(Math.min(...dead.map((d) => d.expiry)) - 100);

    // A graceful release frees its ID at once, not a TTL later.
    await modules.pop()!.close();
    await heldCount(a, 1);
    expect(capacityOf(a)).toMatchObject({ size: 4, held: 1, free: 3, low: false });
    expect(b.status().lease!.state).toBe('released');
  });

  it('warns once when free IDs fall to redis.lowCapacityWarning and says once when they recover', async () => {
    const a = await boot({ lowCapacityWarning: 2 });
    expect(a.status().lease!.lowCapacityAtFree).toBe(2);
    expect(warned('runs low on worker IDs')).toBe(0);
    await claimAndDie();
    await heldCount(a, 2);
    expect(capacityOf(a)).toMatchObject({ free: 2, low: true });
    // Several renewals later, still one warning.
    await sleep(3 * RENEW_MS);
    expect(warned('runs low on worker IDs')).toBe(1);
    expect(warn).toHaveBeenCalledWith(
      expect.stringContaining(`Namespace "${namespace}" runs low on worker IDs: 2 of 4 free (2 held)`),
    );
    expect(warn).toHaveBeenCalledWith(expect.stringContaining('redis.lowCapacityWarning (2 free)'));
    await waitUntil(() => !capacityOf(a).low, TTL + 3 * RENEW_MS + 1000, 'the dead lease to lapse');
    expect(logged(`Namespace "${namespace}" has worker IDs to spare again: 3 of 4 free`)).toBe(1);
  });

  it('agrees with the leases command of the CLI', async () => {
    const a = await boot();
    await claimAndDie();
    await heldCount(a, 2);
    const { code, stdout, stderr } = await cli(
      'leases',
      '--redis',
      url,
      '--namespace',
      namespace,
      '--layout',
      JSON.stringify(LAYOUT),
      '--low-capacity-warning',
      '2',
      '--json',
    );
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    const report = JSON.parse(stdout) as Record<string, unknown>;
    const capacity = capacityOf(a);
    expect(report).toMatchObject({ held: capacity.held, free: capacity.free, capacity: capacity.size, low: true });
  });

  it('waits at bootstrap on a full namespace for the soonest expiry, says so once, and boots within the bound', async () => {
    const alive = await boot();
    const dead = [await claimAndDie(), await claimAndDie(), await claimAndDie()];
    await heldCount(alive, 4);

    const started = Date.now();
    const late = await boot();
    const tookMs = Date.now() - started;
    const soonest = dead.reduce((a, b) => (a.expiry < b.expiry ? a : b));
    // It got an ID of a dead holder, after that holder's lease lapsed, within the default bound of two TTLs.
    expect(dead.map((d) => d.id)).toContain(late.workerId);
    expect(Date.now()).toBeGreaterThanOrEqual(soonest.expiry - 50);
    expect(tookMs).toBeLessThan(2 * TTL + 1000);
    expect(warned(`All 4 worker IDs of namespace "${namespace}" are held (4 live leases)`)).toBe(1);
    expect(warn).toHaveBeenCalledWith(
      expect.stringContaining(
        `waiting up to ${2 * TTL} ms (redis.waitForFreeWorkerIdMs) for one to be released or to expire`,
      ),
    );
    expect(warn).toHaveBeenCalledWith(expect.stringContaining('a rolling deploy with surge'));
    expect(logged(`A worker ID of namespace "${namespace}" became free after`)).toBe(1);
    // Above the dead holder's ceiling: its floor.
    const record = dead.find((d) => d.id === late.workerId)!;
    expect(late.decode(late.next()).timestamp).toBeGreaterThan(record.ceiling);
  });

  it('takes the ID an old instance releases during the wait, well before any lease would lapse', async () => {
    const fleet = [await boot(), await boot(), await boot(), await boot()];
    const pending = boot();
    await sleep(300);
    const leaving = fleet[2];
    const releasedAt = Date.now();
    await modules[2].close();
    const newcomer = await pending;
    expect(newcomer.workerId).toBe(leaving.workerId);
    // Polled at least every renew interval, not at the next expiry of renewed leases.
    expect(Date.now() - releasedAt).toBeLessThan(RENEW_MS + 1000);
  });

  it('fails with LeaseExhaustedError after the bound, naming redis.waitForFreeWorkerIdMs', async () => {
    for (let i = 0; i < 4; i++) await boot();

    const started = Date.now();
    const error = await boot({ waitForFreeWorkerIdMs: 700 }).catch((e: unknown) => e);
    const tookMs = Date.now() - started;
    expect(error).toBeInstanceOf(LeaseExhaustedError);
    const exhausted = error as LeaseExhaustedError;
    expect(exhausted.waitedMs).toBeGreaterThanOrEqual(700);
    expect(tookMs).toBeGreaterThanOrEqual(700);
    expect(exhausted.message).toContain(`All 4 worker IDs of namespace "${namespace}" are held (4 live leases)`);
    expect(exhausted.message).toContain('after waiting');
    expect(exhausted.message).toContain('redis.waitForFreeWorkerIdMs');

    // 0: fails at the first full answer, as before the option existed.
    const quick = Date.now();
    const atOnce = await boot({ waitForFreeWorkerIdMs: 0 }).catch((e: unknown) => e);
    expect(atOnce).toBeInstanceOf(LeaseExhaustedError);
    expect((atOnce as LeaseExhaustedError).waitedMs).toBe(0);
    expect(Date.now() - quick).toBeLessThan(700);
  });
});

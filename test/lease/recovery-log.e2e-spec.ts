import 'reflect-metadata';
import { jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { Redis } from 'ioredis';
import { IdService, SnowflakeModule } from '../../lib/index.js';
import { RedisServer } from '../support/redis-server.js';
import { settledNamespace } from '../support/settled-namespace.js';

const LAYOUT = { timestampBits: 41, datacenterBits: 0, workerBits: 3, sequenceBits: 12 } as const;
/** Renewals every 2.5 s: the restart below fits between two of them on a busy machine. */
const TTL = 10_000;
const MAY_HAVE_LOST = 'may have lost the data';
const NOTHING_LOST = 'nothing of this lease was lost';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * What a holder logs when it takes its ID back after another Redis process took over its namespace: a warning that
 * data may have been lost unless the script saw that nothing of this lease was (the record still shows the holder's
 * last renewal). The server is restarted from a SAVE (a new run_id, the data of the SAVE), once right after a
 * renewal (the SAVE holds it: nothing lost) and once a renewal later (the record is older than the holder's last
 * renewal: a loss the holder cannot rule out).
 */
describe('the log of a lease taken back into another Redis process', () => {
  let server: RedisServer;
  let admin: Redis;
  const modules: TestingModule[] = [];
  let warn: ReturnType<typeof jest.spyOn>;
  let log: ReturnType<typeof jest.spyOn>;

  beforeAll(async () => {
    server = await RedisServer.start();
    admin = new Redis(server.url);
    admin.on('error', () => undefined);
  });

  beforeEach(() => {
    warn = jest.spyOn(Logger.prototype, 'warn');
    log = jest.spyOn(Logger.prototype, 'log');
  });

  afterEach(async () => {
    warn.mockRestore();
    log.mockRestore();
    await Promise.all(modules.splice(0).map((m) => m.close().catch(() => undefined)));
  });

  afterAll(async () => {
    admin.disconnect();
    await server.dispose();
  });

  const said = (spy: ReturnType<typeof jest.spyOn>, text: string) =>
    spy.mock.calls.filter(([message]: unknown[]) => String(message).includes(text)).length;

  async function boot(namespace: string): Promise<IdService> {
    await settledNamespace(admin, namespace);
    const module = await Test.createTestingModule({
      imports: [SnowflakeModule.forRoot({ layout: LAYOUT, redis: { url: server.url, namespace, ttlMs: TTL } })],
    }).compile();
    modules.push(module);
    await module.init();
    return module.get(IdService);
  }

  /** Resolves right after the holder's next confirmed renewal. */
  async function nextRenewal(ids: IdService): Promise<void> {
    const before = ids.status().lease!.lastRenewalAt;
    const deadline = Date.now() + 3 * TTL;
    while (ids.status().lease!.lastRenewalAt === before) {
      if (Date.now() > deadline) throw new Error(`no renewal within ${3 * TTL} ms: ${JSON.stringify(ids.status())}`);
      await sleep(5);
    }
  }

  /** Waits until the holder has taken its ID back into the restarted server's data. */
  async function recovered(ids: IdService, workerId: number): Promise<void> {
    const deadline = Date.now() + 3 * TTL;
    while (said(log, NOTHING_LOST) + said(warn, MAY_HAVE_LOST) === 0) {
      if (Date.now() > deadline)
        throw new Error(`not taken back within ${3 * TTL} ms: ${JSON.stringify(ids.status())}`);
      await sleep(20);
    }
    expect(ids.workerId).toBe(workerId);
    expect(ids.status().lease!.state).toBe('held');
    expect(() => ids.next()).not.toThrow();
  }

  it('says nothing of the lease was lost, at log level, when the new process has its last renewal', async () => {
    const ids = await boot('intact');
    const workerId = ids.workerId;
    await nextRenewal(ids);
    // Right after a renewal: the SAVE holds it, and the next renewal is 2.5 s away.
    await admin.call('SAVE');
    await server.restart();
    await recovered(ids, workerId);
    expect(said(log, NOTHING_LOST)).toBe(1);
    expect(said(warn, MAY_HAVE_LOST)).toBe(0);
  }, 60_000);

  it('warns that Redis may have lost data when the record is older than the last renewal', async () => {
    const ids = await boot('older');
    const workerId = ids.workerId;
    await nextRenewal(ids);
    await admin.call('SAVE');
    // One renewal after the SAVE: the restarted server's record lacks it.
    await nextRenewal(ids);
    await server.restart();
    await recovered(ids, workerId);
    expect(said(warn, MAY_HAVE_LOST)).toBe(1);
    expect(said(log, NOTHING_LOST)).toBe(0);
  }, 60_000);
});

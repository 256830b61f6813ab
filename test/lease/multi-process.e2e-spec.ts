import { Redis } from 'ioredis';
import { SnowflakeCodec, resolveLayout, type SnowflakeParts } from '../../lib/index.js';
import {
  IdWorkerPool,
  analyse,
  sleep,
  waitUntil,
  type Analysis,
  type IdWorker,
  type IdWorkerConfig,
} from '../support/id-workers.js';
import { RedisServer } from '../support/redis-server.js';
import { settledNamespace } from '../support/settled-namespace.js';

/**
 * Separate Node processes (test/lease/fixtures/id-worker.mjs) boot the module against a real redis-server and issue
 * IDs continuously, recording every one. Each case then checks the recordings of all processes together: no ID twice,
 * IDs strictly increasing per process and worker ID, and the holders of one worker ID following each other in time.
 *
 * `LEASE_TEST_SCALE=long` (npm run test:long) runs the same cases longer, over more rounds.
 */
const LONG = process.env.LEASE_TEST_SCALE === 'long';
const SCALE = LONG
  ? { generateMs: 6000, rounds: 4, restarts: 3, batch: 16, testTimeoutMs: 600_000 }
  : { generateMs: 1000, rounds: 1, restarts: 1, batch: 8, testTimeoutMs: 90_000 };

/** A 3-bit worker field: eight worker IDs to hand out. */
const LAYOUT = { timestampBits: 41, datacenterBits: 0, workerBits: 3, sequenceBits: 12 } as const;
const CAPACITY = 8;
const TTL = 1500;
/** Spawning and loading Nest in 8 processes at once on a small machine. */
const LOAD_TIMEOUT = 30_000;
/** Claiming may include the settling of a fresh namespace (12 s) on a loaded machine. */
const BOOT_TIMEOUT = 30_000;

const codec = new SnowflakeCodec(resolveLayout(LAYOUT));
const decode = (id: bigint): SnowflakeParts => codec.decode(id);

describe('Redis lease across processes (real redis-server, every issued ID recorded)', () => {
  const servers: RedisServer[] = [];
  let server: RedisServer;
  let admin: Redis;
  let pool: IdWorkerPool;
  let namespace: string;
  let namespaceCounter = 0;
  /** The worker ID each process holds, as the test last saw it. */
  let workerOf: Map<IdWorker, number>;

  beforeAll(async () => {
    server = await RedisServer.start();
    servers.push(server);
    admin = new Redis(server.url);
  });

  afterAll(async () => {
    admin?.disconnect();
    await Promise.all(servers.map((s) => s.dispose()));
  });

  beforeEach(async () => {
    pool = new IdWorkerPool();
    namespace = `mp${++namespaceCounter}-${process.pid}`;
    workerOf = new Map();
    await settledNamespace(server.url, namespace);
  });

  afterEach(async () => {
    await pool.dispose();
  });

  function config(url = server.url, extra: Partial<IdWorkerConfig> = {}): Omit<IdWorkerConfig, 'out'> {
    return { url, namespace, ttlMs: TTL, layout: LAYOUT, batch: SCALE.batch, intervalMs: 2, ...extra };
  }

  /** Starts `count` processes that load first, then claim at the same instant. */
  async function bootFleet(count: number, url = server.url, extra: Partial<IdWorkerConfig> = {}): Promise<IdWorker[]> {
    const fleet = Array.from({ length: count }, () => pool.spawn(config(url, { ...extra, gate: true })));
    await Promise.all(fleet.map((w) => w.waitFor((e) => e.event === 'loaded', LOAD_TIMEOUT, 'loaded')));
    for (const w of fleet) w.go();
    const workerIds = await Promise.all(fleet.map((w) => w.ready(BOOT_TIMEOUT)));
    fleet.forEach((w, i) => workerOf.set(w, workerIds[i]));
    return fleet;
  }

  /** Spawns one more process and waits until it has recorded its first ID. */
  async function startSuccessor(
    extra: Partial<IdWorkerConfig> = {},
  ): Promise<{ worker: IdWorker; workerId: number; floorMs: number | null; first: SnowflakeParts }> {
    const worker = pool.spawn(config(server.url, extra));
    const workerId = await worker.ready(BOOT_TIMEOUT);
    workerOf.set(worker, workerId);
    const ready = worker.events.find((e) => e.event === 'ready')!;
    await waitUntil(
      () => worker.lastId() !== undefined,
      5000,
      `${worker.name}'s first ID`,
      () => worker.describe(),
    );
    return { worker, workerId, floorMs: ready.floorMs as number | null, first: decode(worker.ids()[0]) };
  }

  function lastRecorded(worker: IdWorker): SnowflakeParts {
    const ids = worker.ids();
    expect(ids.length).toBeGreaterThan(0);
    return decode(ids[ids.length - 1]);
  }

  /**
   * Stops every process gracefully (each one still running must exit 0), then checks all recordings: IDs were
   * recorded, none twice, strictly increasing per process and worker ID, holders of one worker ID in time order.
   */
  async function finish(): Promise<Analysis> {
    const running = pool.running;
    const exits = await pool.stopAll();
    for (const w of running) {
      expect({ worker: w.name, exit: exits.get(w) }).toEqual({ worker: w.name, exit: { code: 0, signal: null } });
    }
    const analysis = analyse(pool.workers, codec);
    expect(analysis.total).toBeGreaterThan(CAPACITY * 100);
    expect(analysis.duplicates.slice(0, 10)).toEqual([]);
    expect(analysis.notIncreasing).toEqual([]);
    expect(analysis.overlaps).toEqual([]);
    return analysis;
  }

  const recordKey = (workerId: number) => `snowflake:{${namespace}:dc0}:w:${workerId}`;

  it(
    `gives ${CAPACITY} processes booting at once distinct worker IDs, and fails one more with LeaseExhaustedError`,
    async () => {
      const fleet = await bootFleet(CAPACITY);
      expect(fleet.map((w) => workerOf.get(w)).sort()).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);

      const extra = pool.spawn(config());
      const error = await extra.bootError(BOOT_TIMEOUT);
      expect(error.name).toBe('LeaseExhaustedError');
      expect(error.namespace).toBe(namespace);
      expect(error.held).toBe(CAPACITY);
      expect(error.message).toContain(`namespace "${namespace}"`);
      expect(error.message).toContain(`${CAPACITY} live leases`);
      expect((await extra.exited).code).toBe(2);

      await sleep(SCALE.generateMs);
      const analysis = await finish();
      expect(analysis.idsOf.get(extra)).toEqual([]);
      for (const w of fleet) {
        const ids = analysis.idsOf.get(w)!;
        expect(ids.length).toBeGreaterThan(100);
        const foreign = ids.filter((id) => decode(id).workerId !== workerOf.get(w));
        expect({ worker: w.name, foreign: foreign.slice(0, 5) }).toEqual({ worker: w.name, foreign: [] });
      }
    },
    SCALE.testTimeoutMs,
  );

  it(
    'lets a new process reclaim the worker ID of a process killed with SIGKILL once its TTL has passed, above its last timestamp',
    async () => {
      // The first holders' clocks run a little ahead of the machine's (within the lease's clock bound), and their
      // successors' do not: a successor's clock is then behind the timestamps its predecessor issued, and the floor
      // (the dead holder's recorded ceiling) keeps it above them. It waits for its clock to pass the floor.
      const skewMs = 30;
      const holders = await bootFleet(CAPACITY, server.url, { clockOffsetMs: skewMs });
      await sleep(SCALE.generateMs / 2);

      for (let round = 0; round < SCALE.rounds; round++) {
        const victim = holders[(round * 3) % holders.length];
        const workerId = workerOf.get(victim)!;
        await sleep(200);
        await victim.kill();
        const killedAt = Date.now();
        const last = lastRecorded(victim);
        expect(last.workerId).toBe(workerId);

        // Every ID has been handed out by the cursor, so the dead one's, once expired, is the only free one.
        await sleep(killedAt + TTL + 300 - Date.now());
        const successor = await startSuccessor({ redis: { maxFloorWaitMs: 2000 } });
        expect(successor.workerId).toBe(workerId);
        expect(successor.floorMs).toBeGreaterThanOrEqual(last.timestamp);
        expect(successor.first.workerId).toBe(workerId);
        expect(successor.first.timestamp).toBeGreaterThan(last.timestamp);
        expect(successor.first.timestamp).toBeGreaterThan(successor.floorMs!);
        holders.splice(holders.indexOf(victim), 1, successor.worker);
        await sleep(SCALE.generateMs / 2);
      }

      const analysis = await finish();
      for (const w of pool.workers) {
        const ids = analysis.idsOf.get(w)!;
        expect(ids.length).toBeGreaterThan(0);
        expect(ids.every((id) => decode(id).workerId === workerOf.get(w))).toBe(true);
      }
    },
    SCALE.testTimeoutMs,
  );

  it(
    'stops a process paused past its TTL from issuing under the worker ID another process took meanwhile',
    async () => {
      const holders = await bootFleet(CAPACITY);
      await sleep(SCALE.generateMs / 2);

      for (let round = 0; round < SCALE.rounds; round++) {
        const victim = holders[(round * 3) % holders.length];
        const stolen = workerOf.get(victim)!;
        victim.pause();
        const pausedAt = Date.now();

        await sleep(TTL + 300);
        const successor = await startSuccessor();
        expect(successor.workerId).toBe(stolen);
        holders.push(successor.worker);
        // Let the new holder issue for a while before the paused one wakes up.
        await sleep(200);

        const resumedAt = Date.now();
        victim.resume();
        await victim.waitFor(
          (e) => e.event === 'log' && e.level === 'error' && e.t >= resumedAt && /lost/.test(String(e.message)),
          5000,
          `a log that the lease on worker ID ${stolen} was lost`,
        );
        await sleep(300);

        // It refused: by fencing itself (the time since its last renewal was sent), or, when the overdue renewal's
        // reply reached it before its next issuing tick, because that reply said the lease was lost. Which comes first
        // after SIGCONT is up to the event loop; the in-process test of a stalled event loop (lease.e2e-spec) pins
        // the fencing down. (The first refusal after the resume, or the one in force when it was paused.)
        const changes = victim.events.filter((e) => e.event === 'unavailable' || e.event === 'available');
        const atPause = changes.filter((e) => e.t < resumedAt).at(-1);
        const refusal =
          atPause?.event === 'unavailable'
            ? atPause
            : changes.find((e) => e.event === 'unavailable' && e.t >= resumedAt);
        expect(['fenced', 'lost', 'switching']).toContain(refusal?.reason);

        // Nothing under the stolen ID after the pause: its last ID under it predates both the pause and the new holder.
        const underStolen = victim
          .ids()
          .map(decode)
          .filter((p) => p.workerId === stolen);
        expect(underStolen.length).toBeGreaterThan(0);
        const lastUnderStolen = Math.max(...underStolen.map((p) => p.timestamp));
        expect(lastUnderStolen).toBeLessThan(successor.first.timestamp);
        expect(lastUnderStolen).toBeLessThan(resumedAt);
        expect(lastUnderStolen).toBeLessThanOrEqual(pausedAt + 50);

        // With all IDs held the resumed process waits; once a holder shuts down it takes that ID, above its last.
        const donor = holders.find((w) => w !== victim && w !== successor.worker)!;
        const donated = workerOf.get(donor)!;
        expect(await donor.stop()).toEqual({ code: 0, signal: null });
        const donorLast = lastRecorded(donor);
        const switched = await victim.waitFor(
          (e) => e.event === 'worker' && e.workerId === donated,
          3 * TTL + 5000,
          `the resumed process issuing under worker ID ${donated}`,
        );
        expect(switched.timestamp as number).toBeGreaterThan(donorLast.timestamp);
        workerOf.set(victim, donated);
        holders.splice(holders.indexOf(donor), 1);
        await sleep(SCALE.generateMs / 2);
      }

      await finish();
    },
    SCALE.testTimeoutMs,
  );

  it(
    'issues no duplicate when Redis restarts without its data while processes generate, and recovers afterwards',
    async () => {
      const volatile = await RedisServer.start();
      servers.push(volatile);
      // A TTL that leaves the holders (ttl - margin, about 4 s) to reach the restarted Redis on a loaded machine:
      // beside a CPU hog, the restart alone took over 2 s.
      const fleet = await bootFleet(CAPACITY, volatile.url, { ttlMs: 4 * TTL });
      await sleep(SCALE.generateMs / 2);

      let restartedAt = 0;
      for (let restart = 0; restart < SCALE.restarts; restart++) {
        const before = Date.now();
        await volatile.restart();
        restartedAt = Date.now();
        // Every holder finds a new namespace marker and, its lease confirmed, takes its worker ID back into the new
        // data without stopping; newcomers would wait for the namespace to settle.
        await Promise.all(
          fleet.map((w) =>
            w.waitFor(
              (e) => e.event === 'log' && e.t >= before && /taken back/.test(String(e.message)),
              4 * TTL + 5000,
              'a log that the worker ID was taken back',
            ),
          ),
        );
        await waitUntil(
          () =>
            fleet.every((w) => {
              const last = w.lastId();
              return last !== undefined && decode(last).timestamp > restartedAt + TTL;
            }),
          4 * TTL + 10_000,
          'every process to issue again after the restart',
          () => fleet.map((w) => w.describe()).join('\n'),
        );
        await sleep(SCALE.generateMs / 2);
      }

      const analysis = await finish();
      for (const w of fleet) {
        const after = analysis.idsOf.get(w)!.filter((id) => decode(id).timestamp > restartedAt);
        expect({ worker: w.name, recovered: after.length > 100 }).toEqual({ worker: w.name, recovered: true });
      }
    },
    SCALE.testTimeoutMs,
  );

  it(
    'issues no duplicate when Redis restarts from an older snapshot, whose records and cursor are stale',
    async () => {
      // The snapshot holds the first half of the fleet; the second half claims after it. Restarted from that
      // snapshot, Redis still has the namespace and its marker, but its cursor again points at IDs that live
      // processes hold. Processes that claim right after the restart must not get those IDs while their holders
      // still issue under them: the new Redis process (a new run_id) starts settling, as after a total loss.
      const half = CAPACITY / 2;
      const snapshotted = await RedisServer.start();
      servers.push(snapshotted);
      const early = await bootFleet(half, snapshotted.url);
      const saver = new Redis(snapshotted.url);
      expect(await saver.save()).toBe('OK');
      saver.disconnect();
      const late = await bootFleet(half - 1, snapshotted.url);
      const newcomer = pool.spawn(config(snapshotted.url, { gate: true }));
      await newcomer.waitFor((e) => e.event === 'loaded', LOAD_TIMEOUT, 'loaded');
      await sleep(SCALE.generateMs / 2);

      const before = Date.now();
      await snapshotted.restart();
      const stale = new Redis(snapshotted.url);
      // The snapshot knows the early half's IDs only: every claimed ID is in the expiry set (the cursor covers those
      // taken in order; claims that arrived together were spread past it).
      expect(await stale.zcard(`snowflake:{${namespace}:dc0}:expiry`)).toBe(half);
      expect(Number(await stale.get(`snowflake:{${namespace}:dc0}:cursor`))).toBeLessThanOrEqual(half);
      stale.disconnect();
      newcomer.go();
      const newcomerId = await newcomer.ready(4 * TTL + BOOT_TIMEOUT);
      workerOf.set(newcomer, newcomerId);

      const fleet = [...early, ...late];
      await waitUntil(
        () =>
          [...fleet, newcomer].every((w) => w.lastId() !== undefined && decode(w.lastId()!).timestamp > before + TTL),
        4 * TTL + 10_000,
        'every process to issue after the restart',
        () => [...fleet, newcomer].map((w) => w.describe()).join('\n'),
      );
      await sleep(SCALE.generateMs / 2);
      await finish();
      // The newcomer's claim came after the restart and waited for the namespace to settle; every earlier holder,
      // its record stale or missing, saw the marker change with the server and took its own ID back, with proof
      // that its lease had not lapsed.
      expect(newcomer.events.some((e) => e.event === 'log' && /settling/.test(String(e.message)))).toBe(true);
      for (const w of fleet) {
        const takenBack = w.events.some(
          (e) => e.event === 'log' && e.t >= before && /taken back/.test(String(e.message)),
        );
        expect({ worker: w.name, takenBack }).toEqual({ worker: w.name, takenBack: true });
      }
    },
    SCALE.testTimeoutMs,
  );

  it(
    "keeps a reused worker ID's previous ceiling when the process waiting to pass it shuts down",
    async () => {
      // A lost holder's note on the donor's record lies ahead of the clocks: whoever takes its worker ID next must
      // wait for its own clock to pass it.
      const leadMs = 1200;
      const fleet = await bootFleet(CAPACITY - 1);
      const donor = pool.spawn(config(server.url));
      workerOf.set(donor, await donor.ready(BOOT_TIMEOUT));
      await sleep(SCALE.generateMs / 2);

      // Bring one process into a re-claim at run time: paused past its TTL, its ID taken meanwhile, resumed.
      const waiter = fleet[0];
      const stolen = workerOf.get(waiter)!;
      waiter.pause();
      await sleep(TTL + 300);
      expect((await startSuccessor()).workerId).toBe(stolen);
      const resumedAt = Date.now();
      waiter.resume();
      await waiter.waitFor(
        (e) => e.event === 'log' && e.level === 'error' && e.t >= resumedAt && /lost/.test(String(e.message)),
        5000,
        `a log that the lease on worker ID ${stolen} was lost`,
      );

      // The donor shuts down; the waiting process takes its ID and waits for its clock to pass the donor's last
      // timestamp. It is shut down during that wait.
      const donated = workerOf.get(donor)!;
      const noted = Date.now() + leadMs;
      await admin.hset(recordKey(donated), 'noted', noted);
      expect(await donor.stop()).toEqual({ code: 0, signal: null });
      const donorLast = lastRecorded(donor);
      await waiter.waitFor(
        (e) =>
          e.event === 'log' && /wait/i.test(String(e.message)) && String(e.message).includes(`worker ID ${donated}`),
        3 * TTL + 5000,
        `the wait for worker ID ${donated}'s previous ceiling`,
      );
      expect(await waiter.stop()).toEqual({ code: 0, signal: null });
      expect(waiter.ids().filter((id) => decode(id).workerId === donated)).toEqual([]);

      // The record still bars the donor's timestamps and the note, and the next holder starts above both.
      const record = await admin.hgetall(recordKey(donated));
      expect(record.token).toBeUndefined();
      expect(Number(record.ceiling)).toBeGreaterThanOrEqual(donorLast.timestamp);
      expect(Number(record.noted)).toBe(noted);
      const next = await startSuccessor({ redis: { maxFloorWaitMs: 5 * leadMs } });
      expect(next.workerId).toBe(donated);
      expect(next.first.timestamp).toBeGreaterThan(donorLast.timestamp);
      expect(next.first.timestamp).toBeGreaterThan(noted);

      await sleep(SCALE.generateMs / 2);
      await finish();
    },
    SCALE.testTimeoutMs,
  );

  it(
    'lets the next process reuse the worker ID of a process stopped with SIGTERM at once, above its exact last timestamp',
    async () => {
      // A longer TTL here, so that "claimed before the old lease could have lapsed" holds with room to spare.
      const ttlMs = 2 * TTL;
      const holders = await bootFleet(CAPACITY, server.url, { ttlMs });
      const successor = pool.spawn(config(server.url, { ttlMs, gate: true }));
      await successor.waitFor((e) => e.event === 'loaded', LOAD_TIMEOUT, 'loaded');
      await sleep(SCALE.generateMs / 2);

      const victim = holders[5];
      const workerId = workerOf.get(victim)!;
      // Without the release, the ID would stay taken at least until this (Redis server ms).
      const expiryBefore = Number(await admin.zscore(`snowflake:{${namespace}:dc0}:expiry`, String(workerId)));
      expect(expiryBefore).toBeGreaterThan(0);

      expect(await victim.stop()).toEqual({ code: 0, signal: null });
      const stopped = victim.events.find((e) => e.event === 'stopped')!;
      const last = lastRecorded(victim);
      const released = await admin.hgetall(recordKey(workerId));
      expect(released.token).toBeUndefined();
      expect(Number(released.ceiling)).toBe(stopped.lastTimestampMs);
      expect(Number(released.ceiling)).toBeGreaterThanOrEqual(last.timestamp);

      successor.go();
      expect(await successor.ready(BOOT_TIMEOUT)).toBe(workerId);
      workerOf.set(successor, workerId);
      const claimed = await admin.hgetall(recordKey(workerId));
      expect(Number(claimed.claimed)).toBeLessThan(expiryBefore);
      expect(Number(claimed.floor)).toBe(Number(released.ceiling));
      await waitUntil(
        () => successor.lastId() !== undefined,
        5000,
        "the successor's first ID",
        () => successor.describe(),
      );
      const first = decode(successor.ids()[0]);
      expect(first.workerId).toBe(workerId);
      expect(first.timestamp).toBeGreaterThan(Number(released.ceiling));

      await sleep(SCALE.generateMs / 2);
      await finish();
    },
    SCALE.testTimeoutMs,
  );
});

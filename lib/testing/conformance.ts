import type { Layout } from '../core/layout.js';
import type { WorkerIdSource } from '../worker/worker-source.js';
import { ManualClock } from './manual-clock.js';
import { SourceHost, type IssuedId } from './source-host.js';

/**
 * What the conformance suite needs to run a worker-ID source: a way to create one source per simulated process (all
 * sharing one backend), the timing it promises, and the faults the suite may inject.
 *
 * @publicApi
 */
export interface WorkerSourceFactory {
  /** A name for reports, such as "Redis lease". */
  readonly name: string;
  /** The layout the sources hand worker IDs for. */
  readonly layout: Layout;
  /** How many worker IDs the backend hands out: small (2 to 8), so that the cases can force reuse. */
  readonly workerIdCount: number;
  /** The lease time and the margin before it at which a holder that cannot renew must stop issuing. */
  readonly ttlMs: number;
  readonly fenceMarginMs: number;
  /** How often a holder renews: a loss is seen within this. */
  readonly renewIntervalMs: number;
  /** The generator's clock-back tolerance the sources run with. */
  readonly clockBackToleranceMs: number;
  /** How far a holder's clock may stand from the backend's and still be handed an ID (for the skew case). */
  readonly maxClockSkewMs: number;
  /** A new source, as one process creates it, reading `clock`. */
  create(clock: ManualClock): WorkerIdSource;
  /** Runs before each case: a fresh backend (for example a new namespace). */
  reset?(): Promise<void>;
  /** Faults the suite injects where the backend allows them; a case whose fault is missing is not applicable. */
  readonly capabilities?: {
    /** Cuts one source off from the backend (its calls fail) until {@link heal}. */
    partition?(source: WorkerIdSource): Promise<void> | void;
    heal?(source: WorkerIdSource): Promise<void> | void;
    /** Someone else takes worker ID `workerId` from its holder in the backend. */
    loseLease?(workerId: number): Promise<void> | void;
    /** The backend loses all its data (a Redis restart without persistence, a flush). */
    loseData?(): Promise<void> | void;
  };
}

/** One case of the suite; `run()` throws an Error saying what broke the contract. */
export interface ConformanceCase {
  name: string;
  /** Why the case cannot run against this factory (a fault it does not offer), else undefined. */
  notApplicable?: string;
  run(): Promise<void>;
}

/** A case's outcome. */
export interface ConformanceResult {
  name: string;
  status: 'passed' | 'failed' | 'not applicable';
  reason?: string;
  ms: number;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** How late, beyond what the contract states, a timer on a busy machine may fire: the suite's tolerance. */
const SLACK_MS = 400;

class Run {
  readonly hosts: SourceHost[] = [];
  constructor(private readonly factory: WorkerSourceFactory) {}

  async host(name: string, clock = new ManualClock()): Promise<SourceHost> {
    const host = new SourceHost(
      name,
      this.factory.create(clock),
      this.factory.layout,
      clock,
      this.factory.clockBackToleranceMs,
    );
    this.hosts.push(host);
    await host.start();
    return host;
  }

  /** Starts hosts until every worker ID but `free` is held; returns them. */
  async fill(free: number, prefix: string): Promise<SourceHost[]> {
    const held: SourceHost[] = [];
    for (let i = 0; i < this.factory.workerIdCount - free; i++) held.push(await this.host(`${prefix}${i}`));
    return held;
  }

  all(): IssuedId[] {
    return this.hosts.flatMap((host) => host.issued);
  }

  async close(): Promise<void> {
    await Promise.all(this.hosts.map((host) => host.stop().catch(() => undefined)));
  }
}

function assert(condition: boolean, reason: string): void {
  if (!condition) throw new Error(reason);
}

function assertNoDuplicate(ids: IssuedId[]): void {
  const seen = new Map<bigint, IssuedId>();
  for (const entry of ids) {
    const before = seen.get(entry.id);
    assert(
      before === undefined,
      `ID ${entry.id} issued twice: by ${before?.host} and by ${entry.host} (worker ID ${entry.workerId})`,
    );
    seen.set(entry.id, entry);
  }
}

/**
 * The cases of the worker-ID source contract (see `WorkerIdSource`), ready for any test runner: one `it()` per case
 * with `await testCase.run()`.
 *
 * @publicApi
 */
export function conformanceCases(factory: WorkerSourceFactory): ConformanceCase[] {
  const caps = factory.capabilities ?? {};
  const withRun = (name: string, body: (run: Run) => Promise<void>, notApplicable?: string): ConformanceCase => ({
    name,
    notApplicable,
    async run() {
      await factory.reset?.();
      const run = new Run(factory);
      try {
        await body(run);
      } finally {
        await run.close();
      }
    },
  });

  return [
    withRun('two claims never share a worker ID, and their IDs never collide', async (run) => {
      const hosts = await Promise.all(Array.from({ length: factory.workerIdCount }, (_, i) => run.host(`h${i}`)));
      const ids = new Set(hosts.map((host) => host.workerId));
      assert(ids.size === hosts.length, `${hosts.length} holders share worker IDs ${[...ids].join(', ')}`);
      hosts.forEach((host) => host.issueContinuously());
      await sleep(Math.min(1000, factory.ttlMs / 2));
      assertNoDuplicate(run.all());
      assert(run.all().length > 0, 'no ID was issued');
    }),

    withRun(
      "a reused ID's first timestamp lies above all its previous holder issued, with skewed clocks",
      async (run) => {
        await run.fill(1, 'other');
        const ahead = await run.host('ahead', new ManualClock({ offsetMs: factory.maxClockSkewMs }));
        ahead.issueContinuously();
        await sleep(200);
        await ahead.stop();
        const behind = await run.host('behind', new ManualClock({ offsetMs: -factory.maxClockSkewMs }));
        assert(behind.workerId === ahead.workerId, `the only free worker ID (${ahead.workerId}) was not handed out`);
        behind.issueContinuously();
        await sleep(2 * factory.maxClockSkewMs + 200);
        behind.stopIssuing();
        const last = ahead.issued.at(-1);
        const first = behind.issued[0];
        if (last === undefined || first === undefined) throw new Error('the holders issued nothing');
        assert(
          first.id > last.id,
          `the next holder of worker ID ${ahead.workerId} issued ${first.id} (at ${first.timestampMs}) below its ` +
            `previous holder's last ID ${last.id} (at ${last.timestampMs}): the floor was lost`,
        );
        assertNoDuplicate(run.all());
      },
    ),

    withRun(
      'a holder that cannot renew stops issuing by ttl - margin',
      async (run) => {
        const host = await run.host('cut-off');
        const cutAt = performance.now();
        await caps.partition!(host.source);
        const deadline = cutAt + factory.ttlMs - factory.fenceMarginMs + SLACK_MS;
        let lastIssuedAt = cutAt;
        while (performance.now() < deadline + factory.renewIntervalMs) {
          if (host.issue() !== undefined) lastIssuedAt = performance.now();
          await sleep(5);
        }
        await caps.heal!(host.source);
        assert(
          lastIssuedAt <= deadline,
          `it issued ${Math.round(lastIssuedAt - cutAt)} ms after it was cut off, beyond ttl - margin ` +
            `(${factory.ttlMs - factory.fenceMarginMs} ms, + ${SLACK_MS} ms slack)`,
        );
      },
      factory.capabilities?.partition && factory.capabilities.heal ? undefined : 'needs capabilities.partition/heal',
    ),

    withRun(
      'a lost lease stops issuing at once, and the next holder stays above it',
      async (run) => {
        await run.fill(1, 'other');
        const loser = await run.host('loser');
        const lostId = loser.workerId;
        loser.issueContinuously();
        await sleep(100);
        await caps.loseLease!(lostId);
        await sleep(factory.renewIntervalMs + SLACK_MS);
        const seenAt = loser.issued.length;
        await sleep(200);
        const after = loser.issued.slice(seenAt).filter((entry) => entry.workerId === lostId);
        loser.stopIssuing();
        assert(
          after.length === 0,
          `${after.length} IDs were issued under worker ID ${lostId} after its loss could have been seen`,
        );
        assertNoDuplicate(run.all());
      },
      factory.capabilities?.loseLease ? undefined : 'needs capabilities.loseLease',
    ),

    withRun('a released worker ID is claimable at once', async (run) => {
      await run.fill(1, 'other');
      const first = await run.host('first');
      first.issue();
      await first.stop();
      const started = performance.now();
      const second = await run.host('second');
      const tookMs = performance.now() - started;
      assert(second.workerId === first.workerId, `the released worker ID ${first.workerId} was not handed out`);
      assert(tookMs < factory.ttlMs / 2, `claiming the released worker ID took ${Math.round(tookMs)} ms`);
    }),

    withRun('a process never goes below its own last timestamp on a worker ID it held', async (run) => {
      const host = await run.host('stepped');
      host.issueContinuously();
      await sleep(200);
      host.clock.step(-(factory.clockBackToleranceMs + 500));
      await sleep(factory.clockBackToleranceMs + 1000);
      host.clock.step(factory.clockBackToleranceMs + 500);
      await sleep(factory.renewIntervalMs + SLACK_MS);
      host.stopIssuing();
      assertNoDuplicate(run.all());
      const lastByWorker = new Map<number, bigint>();
      for (const entry of host.issued) {
        const before = lastByWorker.get(entry.workerId);
        assert(
          before === undefined || entry.id > before,
          `worker ID ${entry.workerId} went back: ${entry.id} after ${before}`,
        );
        lastByWorker.set(entry.workerId, entry.id);
      }
    }),

    withRun(
      'recovery after data loss gives no duplicate',
      async (run) => {
        const hosts = await run.fill(1, 'holder');
        hosts.forEach((host) => host.issueContinuously());
        await sleep(200);
        await caps.loseData!();
        const late = await run.host('late');
        late.issueContinuously();
        await sleep(factory.ttlMs + factory.renewIntervalMs);
        run.hosts.forEach((host) => host.stopIssuing());
        assertNoDuplicate(run.all());
        assert(late.issued.length > 0, 'the instance started after the loss never issued');
      },
      factory.capabilities?.loseData ? undefined : 'needs capabilities.loseData',
    ),
  ];
}

/**
 * Runs every case in turn and reports each: passed, failed with the reason, or not applicable.
 *
 * @publicApi
 */
export async function runWorkerSourceConformance(factory: WorkerSourceFactory): Promise<ConformanceResult[]> {
  const results: ConformanceResult[] = [];
  for (const testCase of conformanceCases(factory)) {
    const started = performance.now();
    if (testCase.notApplicable !== undefined) {
      results.push({ name: testCase.name, status: 'not applicable', reason: testCase.notApplicable, ms: 0 });
      continue;
    }
    try {
      await testCase.run();
      results.push({ name: testCase.name, status: 'passed', ms: Math.round(performance.now() - started) });
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      results.push({ name: testCase.name, status: 'failed', reason, ms: Math.round(performance.now() - started) });
    }
  }
  return results;
}

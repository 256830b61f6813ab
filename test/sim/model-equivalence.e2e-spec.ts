/**
 * The simulator's Redis model against a real redis-server: generated traces of the lease's four scripts (with
 * arguments an honest holder sends and ones it never would) and of keyspace faults (FLUSHALL, deletion of any keys,
 * ageing the marker and the leases, SAVE, a restart that loads the last snapshot or nothing, a rollback in the same
 * process with DEBUG RELOAD NOSAVE) run against both. Every reply must be equal, and so must every key and field
 * afterwards.
 *
 * What is driven equal rather than compared:
 * - the server time: the real script runs first, and the model runs at the millisecond the real reply reports (the
 *   scripts read `TIME` once and round it down to the millisecond, so the microseconds never matter);
 * - the identity: the model takes the real server's `run_id` and `master_replid` at the start and after each restart
 *   or reload (both are random in Redis; the scripts only compare them).
 * What the model cannot make exact, and the traces therefore do not try: the text of an error (only that both fail),
 * key expiry and eviction by memory policy (the model has neither; the simulator deletes keys instead), replication,
 * WAIT and Sentinel, and Lua 5.1 arithmetic beyond 2^53 or printing of numbers of 15 digits or more (the model prints
 * `%.14g` as 5.1 does, but computes in JavaScript doubles; the scripts' numbers are milliseconds, 13 digits).
 * Ageing is done with the same HSET/ZADD on both sides, since real time cannot be skipped: it is how the traces reach
 * a settled namespace and lapsed leases without waiting 12 s.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { LeaseProtocol } from '../../lib/lease/redis/lease.protocol.js';
import { CLAIM_SCRIPT, NOTE_SCRIPT, RELEASE_SCRIPT, RENEW_SCRIPT } from '../../lib/lease/redis/lease.scripts.js';
import { RedisServer } from '../support/redis-server.js';
import { scriptEngine, type EngineName } from './lua/engines.js';
import { RedisModel, type Reply, type Snapshot } from './redis-model.js';

const TRACES = Number(process.env.SIM_TRACES ?? 300);
/** Fengari, the reference engine the simulator no longer runs by default, on fewer traces. */
const FENGARI_TRACES = Math.ceil(TRACES / 3);
const TTL = 1000;
const MARGIN = 200;
const CONFIGS = ['ttlMs=1000 layout=a', 'ttlMs=1000 layout=b'];
const TOKENS = ['t0', 't1', 't2', 't3'];
const ID_COUNT = 3;

type Op =
  | {
      kind: 'claim';
      token: number;
      holderDelta: number;
      excluded: number[];
      candidate: number;
      config: number;
      /** Claims again naming the candidate a `retry` names, as the lease does. */
      follow: boolean;
      /** The ID and token of a lease lost while the namespace settled, which may be reserved for this claim. */
      prior: { id: number; token: number } | null;
    }
  | {
      kind: 'renew';
      /** Sends what the holder of the ID would (its token, the last marker, expiry and revision), else the rest. */
      honest: boolean;
      id: number;
      token: number;
      ceilingDelta: number;
      marker: number;
      expiry: 'last' | number;
      revs: number[];
      rev: number;
      config: number;
    }
  | { kind: 'release'; honest: boolean; id: number; token: number; lastDelta: number }
  | { kind: 'note'; id: number; lastDelta: number }
  | { kind: 'flushall' }
  | { kind: 'delete'; which: number[] }
  | { kind: 'age-marker'; byMs: number }
  | { kind: 'age-leases'; byMs: number }
  | { kind: 'save' }
  | { kind: 'reload' }
  | { kind: 'restart' };

const delta = fc.integer({ min: -3000, max: 3000 });
const id = fc.integer({ min: 0, max: ID_COUNT });
const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 10,
    arbitrary: fc.record({
      kind: fc.constant('claim' as const),
      token: fc.nat(TOKENS.length - 1),
      holderDelta: delta,
      excluded: fc.uniqueArray(fc.nat(ID_COUNT - 1), { maxLength: 2 }),
      candidate: id,
      config: fc.oneof({ weight: 4, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.constant(1) }),
      follow: fc.oneof({ weight: 3, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
      prior: fc.option(fc.record({ id: fc.nat(ID_COUNT - 1), token: fc.nat(TOKENS.length - 1) }), { freq: 3 }),
    }),
  },
  {
    weight: 12,
    arbitrary: fc.record({
      kind: fc.constant('renew' as const),
      honest: fc.oneof({ weight: 3, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
      id,
      token: fc.nat(TOKENS.length - 1),
      ceilingDelta: delta,
      marker: fc.nat(3),
      expiry: fc.oneof(fc.constant('last' as const), delta),
      revs: fc.uniqueArray(fc.nat(3), { minLength: 1, maxLength: 2 }),
      rev: fc.nat(4),
      config: fc.oneof({ weight: 4, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.constant(1) }),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('release' as const),
      honest: fc.boolean(),
      id,
      token: fc.nat(TOKENS.length - 1),
      lastDelta: delta,
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('note' as const), id, lastDelta: delta }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'flushall' as const }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('delete' as const),
      which: fc.oneof(
        fc.uniqueArray(fc.nat(2 + ID_COUNT), { minLength: 1, maxLength: 3 }),
        fc.nat(ID_COUNT - 1).map((record) => [3 + record]),
      ),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('age-marker' as const),
      byMs: fc.oneof(fc.integer({ min: 1, max: 20000 }), fc.constant(12_000)),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant('age-leases' as const), byMs: fc.integer({ min: 1, max: 5000 }) }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'save' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'reload' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'restart' as const }) },
);

const claimBy = (token: number): Extract<Op, { kind: 'claim' }> => ({
  kind: 'claim',
  token,
  holderDelta: 0,
  excluded: [],
  candidate: 0,
  config: 0,
  follow: true,
  prior: null,
});

/** A free ID's record deleted right after its release, once the cursor is spent: the claim answers `wait`. */
const REACHES_WAIT: Op[] = [
  claimBy(0),
  claimBy(1),
  claimBy(2),
  { kind: 'release', honest: true, id: 0, token: 0, lastDelta: 0 },
  { kind: 'delete', which: [3] },
  claimBy(3),
];

/** A partial loss met first by an instance of another contract: the new marker keeps the namespace's contract. */
/**
 * A holder's lease lapses through a full loss and its first renewal finds the namespace settling: its ID is reserved,
 * passed over by another claim, and handed to the holder's claim naming it.
 */
const REACHES_RESERVATION: Op[] = [
  claimBy(0),
  { kind: 'flushall' },
  claimBy(1),
  {
    kind: 'renew',
    honest: false,
    id: 0,
    token: 0,
    ceilingDelta: 0,
    marker: 0,
    expiry: -500,
    revs: [0],
    rev: 1,
    config: 0,
  },
  { kind: 'age-marker', byMs: 12_000 },
  claimBy(2),
  { ...claimBy(3), prior: { id: 0, token: 0 } },
];

const KEEPS_CONTRACT: Op[] = [claimBy(0), { kind: 'delete', which: [1] }, { ...claimBy(1), config: 1 }];

describe('the Redis model against redis-server', () => {
  let server: RedisServer;
  let redis: Redis;
  let traces = 0;
  /** Replies seen, by script and status: the traces must reach every one. */
  const seen = new Map<string, number>();

  beforeAll(async () => {
    server = await RedisServer.start({ args: ['--enable-debug-command', 'yes'] });
    redis = new Redis(server.url, { maxRetriesPerRequest: 50 });
  });

  afterAll(async () => {
    redis.disconnect();
    await server.dispose();
  });

  async function identity(): Promise<{ runId: string; replId: string }> {
    const info = `${String(await redis.info('server'))}${String(await redis.info('replication'))}`;
    return { runId: /run_id:(\w+)/.exec(info)![1], replId: /master_replid:(\w+)/.exec(info)![1] };
  }

  async function realDump(): Promise<Record<string, unknown>> {
    const out: Record<string, unknown> = {};
    for (const key of (await redis.keys('*')).sort()) {
      const type = await redis.type(key);
      if (type === 'string') out[key] = await redis.get(key);
      else if (type === 'hash') {
        const hash = await redis.hgetall(key);
        out[key] = Object.fromEntries(Object.entries(hash).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
      } else if (type === 'zset') {
        const flat = ((await redis.call('ZRANGE', key, '0', '-1', 'WITHSCORES')) as unknown[]).flat().map(String);
        const pairs: [string, string][] = [];
        for (let i = 0; i < flat.length; i += 2) pairs.push([flat[i], flat[i + 1]]);
        out[key] = pairs;
      } else out[key] = `unexpected type ${type}`;
    }
    return out;
  }

  /** Every trace starts with a namespace made and settled, so that claims can succeed. */
  const SETTLED: Op[] = [
    { kind: 'claim', token: 0, holderDelta: 0, excluded: [], candidate: 0, config: 0, follow: true, prior: null },
    { kind: 'age-marker', byMs: 12_000 },
  ];

  async function runTrace(generated: Op[], lua: EngineName): Promise<void> {
    const ops = [...SETTLED, ...generated];
    const tag = `eq${++traces}`;
    const keys = {
      meta: `snowflake:{${tag}}:meta`,
      cursor: `snowflake:{${tag}}:cursor`,
      expiry: `snowflake:{${tag}}:expiry`,
      recordPrefix: `snowflake:{${tag}}:w:`,
    };
    const allKeys = [keys.meta, keys.cursor, keys.expiry, ...[0, 1, 2].map((i) => keys.recordPrefix + i)];
    await redis.flushall();
    await redis.call('SAVE');
    let at = 0;
    const model = new RedisModel(() => at, traces, scriptEngine(lua));
    Object.assign(model, await identity());
    let saved: Snapshot = model.snapshot();
    const markers: string[] = [];
    const lastExpiry = new Map<number, number>();
    const holders = new Map<number, { token: string; rev: number }>();
    const log: string[] = [];

    const both = async (lua: string, id: number, args: (string | number)[]): Promise<unknown[]> => {
      const scriptKeys = [keys.meta, keys.cursor, keys.expiry, keys.recordPrefix + id];
      let real: Reply | Error;
      try {
        real = (await redis.eval(lua, 4, ...scriptKeys, ...args)) as Reply;
      } catch (error) {
        real = error as Error;
      }
      if (Array.isArray(real)) at = Number(real[real.length - 2]);
      else at = Date.now();
      let modelled: Reply | Error;
      try {
        modelled = model.eval(lua, scriptKeys, args);
      } catch (error) {
        modelled = error as Error;
      }
      log.push(`${JSON.stringify(args)} -> ${JSON.stringify(real instanceof Error ? real.message : real)}`);
      if (real instanceof Error || modelled instanceof Error) {
        expect({ trace: log, failed: modelled instanceof Error }).toEqual({
          trace: log,
          failed: real instanceof Error,
        });
        return [];
      }
      expect({ trace: log, reply: modelled }).toEqual({ trace: log, reply: real });
      const what = `${lua === CLAIM_SCRIPT ? 'claim' : lua === RENEW_SCRIPT ? 'renew' : lua === NOTE_SCRIPT ? 'note' : 'release'}:${String((real as unknown[])[0])}${(real as unknown[])[0] === 'lost' ? `:${String((real as unknown[])[1])}` : ''}`;
      seen.set(what, (seen.get(what) ?? 0) + 1);
      return real as unknown[];
    };
    const command = async (...args: string[]): Promise<void> => {
      await redis.call(args[0], ...args.slice(1));
      model.command(args);
    };

    for (const op of ops) {
      const now = Date.now();
      switch (op.kind) {
        case 'claim': {
          const protocol = new LeaseProtocol(keys, {
            ttlMs: TTL,
            config: CONFIGS[op.config],
            idCount: ID_COUNT,
            fenceMarginMs: MARGIN,
          });
          let candidate = op.candidate;
          const prior = op.prior === null ? undefined : { id: op.prior.id, token: TOKENS[op.prior.token] };
          const reservedFor = prior === undefined ? null : await redis.hget(keys.meta, `reserved:${prior.id}`);
          for (let attempt = 0; attempt < 3; attempt++) {
            const args = protocol.claimArgs({
              token: TOKENS[op.token],
              holderNowMs: now + op.holderDelta,
              host: 'h',
              pid: 1,
              excluded: op.excluded,
              candidate,
              ...(prior === undefined ? {} : { prior }),
            });
            const reply = await both(CLAIM_SCRIPT, candidate, args);
            if (reply[0] === 'ok' && prior !== undefined && Number(reply[1]) === prior.id) {
              if (reservedFor === prior.token) seen.set('claim:ok:reserved', 1);
            }
            if (reply[0] === 'ok') {
              markers.push(String(reply[3]));
              lastExpiry.set(Number(reply[1]), Number(reply[4]));
              holders.set(Number(reply[1]), { token: TOKENS[op.token], rev: 0 });
            }
            if (reply[0] !== 'retry' || !op.follow) break;
            candidate = Number(reply[1]);
          }
          break;
        }
        case 'renew': {
          const protocol = new LeaseProtocol(keys, {
            ttlMs: TTL,
            config: CONFIGS[op.config],
            idCount: ID_COUNT,
            fenceMarginMs: MARGIN,
          });
          const holder = holders.get(op.id);
          const honest = op.honest && holder !== undefined;
          const args = protocol.renewArgs(
            {
              id: op.id,
              token: honest ? holder.token : TOKENS[op.token],
              ceilingMs: now + TTL + op.ceilingDelta,
              marker: (honest ? markers[markers.length - 1] : markers[markers.length - 1 - op.marker]) ?? 'none',
              previousExpiry: op.expiry === 'last' || honest ? (lastExpiry.get(op.id) ?? 0) : now + op.expiry,
              marginMs: MARGIN,
              knownRevs: honest ? [holder.rev] : op.revs,
              rev: honest ? holder.rev + 1 : op.rev,
            },
            `fresh${markers.length}`,
          );
          const reply = await both(RENEW_SCRIPT, op.id, args);
          if (reply[0] === 'ok' || reply[0] === 'recovered') {
            markers.push(String(reply[2]));
            lastExpiry.set(op.id, Number(reply[1]));
            if (honest) holder.rev += 1;
          }
          break;
        }
        case 'release': {
          const protocol = new LeaseProtocol(keys, {
            ttlMs: TTL,
            config: CONFIGS[0],
            idCount: ID_COUNT,
            fenceMarginMs: MARGIN,
          });
          const token = op.honest ? (holders.get(op.id)?.token ?? TOKENS[op.token]) : TOKENS[op.token];
          await both(
            RELEASE_SCRIPT,
            op.id,
            protocol.releaseArgs(op.id, token, now + op.lastDelta, `fresh-r${markers.length}`),
          );
          break;
        }
        case 'note': {
          const protocol = new LeaseProtocol(keys, {
            ttlMs: TTL,
            config: CONFIGS[0],
            idCount: ID_COUNT,
            fenceMarginMs: MARGIN,
          });
          await both(NOTE_SCRIPT, op.id, protocol.noteArgs(op.id, now + op.lastDelta, `fresh-n${markers.length}`));
          break;
        }
        case 'flushall':
          await redis.flushall();
          model.flushAll();
          break;
        case 'delete': {
          const chosen = op.which.map((i) => allKeys[i]);
          await redis.del(...chosen);
          model.deleteKeys(chosen);
          break;
        }
        case 'age-marker': {
          const created = await redis.hget(keys.meta, 'created');
          if (created !== null) await command('HSET', keys.meta, 'created', String(Number(created) - op.byMs));
          break;
        }
        case 'age-leases': {
          const flat = ((await redis.call('ZRANGE', keys.expiry, '0', '-1', 'WITHSCORES')) as unknown[])
            .flat()
            .map(String);
          for (let i = 0; i < flat.length; i += 2) {
            await command('ZADD', keys.expiry, String(Number(flat[i + 1]) - op.byMs), flat[i]);
          }
          break;
        }
        case 'save':
          await redis.call('SAVE');
          saved = model.snapshot();
          break;
        case 'reload':
          await redis.call('DEBUG', 'RELOAD', 'NOSAVE');
          model.rollback(saved);
          Object.assign(model, await identity());
          break;
        case 'restart':
          await server.restart();
          model.restart(saved);
          Object.assign(model, await identity());
          break;
      }
      log.push(`${op.kind}`);
    }
    if (process.env.SIM_DEBUG) process.stdout.write(log.join('\n') + '\n');
    expect({ trace: log, keys: model.dump() }).toEqual({ trace: log, keys: await realDump() });
  }

  it(`gives the same replies and keys over ${TRACES} generated traces (the scripts compiled to JavaScript)`, async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 4, maxLength: 40 }), async (ops) => {
        await runTrace(ops, 'compiled');
      }),
      { numRuns: TRACES, examples: [[REACHES_WAIT], [KEEPS_CONTRACT], [REACHES_RESERVATION]] },
    );
    const kinds = [...seen].sort(([a], [b]) => (a < b ? -1 : 1));
    process.stdout.write(`replies seen: ${kinds.map(([k, n]) => `${k} ${n}`).join(', ')}\n`);
    const expected = [
      'claim:ok',
      'claim:settling',
      'claim:wait',
      'claim:retry',
      'claim:exhausted',
      'claim:mismatch',
      'claim:ok:reserved',
      'renew:ok',
      'renew:recovered',
      'renew:lost:marker',
      'renew:lost:missing',
      'renew:lost:taken',
      'renew:lost:config',
      'renew:lost:rollback',
      'release:released',
      'release:not-owner',
      'note:noted',
    ];
    expect(expected.filter((kind) => !seen.has(kind))).toEqual([]);
  }, 600_000);

  it(`gives the same replies and keys over ${FENGARI_TRACES} generated traces with the scripts in fengari`, async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 4, maxLength: 40 }), async (ops) => {
        await runTrace(ops, 'fengari');
      }),
      { numRuns: FENGARI_TRACES, seed: 77, examples: [[REACHES_WAIT], [KEEPS_CONTRACT], [REACHES_RESERVATION]] },
    );
  }, 600_000);

  it.each(['compiled', 'fengari'] as const)(
    'prints numbers as Lua 5.1 does and keeps its arithmetic on doubles (%s)',
    (lua) => {
      const model = new RedisModel(() => 1_764_075_302_123, 1, scriptEngine(lua));
      const reply = model.eval(
        `local t = redis.call('TIME')
       local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
       return {tostring(now), tostring(tonumber('3')), tostring(8 / 2), now}`,
        [],
        [],
      );
      expect(reply).toEqual(['1764075302123', '3', '4', 1764075302123]);
    },
  );
});

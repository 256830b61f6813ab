import { SnowflakeCodec } from '../core/codec.js';
import { InvalidSnowflakeError } from '../core/errors.js';
import { leaseKeys } from '../lease/lease.keys.js';
import { capacityOf, lowCapacityAtFree } from '../lease/lease.math.js';
import { redactUrl } from '../lease/redis/redis-cause.js';
import type { CliArgs } from './cli-args.js';
import { dateOf } from './cli-dates.js';
import { UsageError } from './usage.error.js';
import { json, table } from './cli-output.js';

/** What a command prints: results on stdout, errors on stderr (any error makes the exit code 1). */
export interface CommandResult {
  output: string;
  errors?: string[];
}

export function decode(args: CliArgs): CommandResult {
  if (args.positionals.length === 0) throw new UsageError('decode: give one or more IDs');
  const codec = new SnowflakeCodec(args.layout);
  const errors: string[] = [];
  const rows = [];
  for (const input of args.positionals) {
    try {
      const parts = codec.decode(input);
      rows.push({
        id: parts.id.toString(),
        time: parts.date.toISOString(),
        datacenterId: parts.datacenterId,
        workerId: parts.workerId,
        sequence: parts.sequence,
        ...(parts.shard === undefined ? {} : { shard: parts.shard }),
      });
    } catch (error) {
      if (!(error instanceof InvalidSnowflakeError)) throw error;
      errors.push(error.message);
    }
  }
  // A script reading stdout gets only IDs that decoded; what did not is on stderr and in the exit code.
  return { output: args.json ? json(rows) : rows.map((row) => table([row])).join('\n\n'), errors };
}

export function range(args: CliArgs): CommandResult {
  const codec = new SnowflakeCodec(args.layout);
  const from = dateOf('--from', args.from);
  const to = dateOf('--to', args.to);
  if (to.getTime() < from.getTime()) throw new UsageError('range: --to lies before --from');
  const bounds = { from: from.toISOString(), to: to.toISOString(), min: codec.minIdAt(from), max: codec.maxIdAt(to) };
  if (args.json) return { output: json(bounds) };
  return { output: `${table([bounds])}\n\nWHERE id BETWEEN ${bounds.min} AND ${bounds.max}` };
}

/** Who holds which worker ID of a namespace: read-only, from the keys the lease writes. */
export async function leases(args: CliArgs): Promise<CommandResult> {
  if (args.redis === undefined) throw new UsageError('leases: --redis <url> is required');
  const { Redis } = await import('ioredis');
  const redis = new Redis(args.redis, { lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null });
  let cause: Error | undefined;
  redis.on('error', (error: Error) => (cause = error));
  try {
    await redis.connect().catch((error: Error) => {
      throw new Error(`cannot reach Redis at ${redactUrl(args.redis!)}: ${(cause ?? error).message}`);
    });
    return await readLeases(redis, args);
  } finally {
    redis.disconnect();
  }
}

async function readLeases(redis: import('ioredis').Redis, args: CliArgs): Promise<CommandResult> {
  const keys = leaseKeys({ namespace: args.namespace, allocateDatacenter: false }, args.datacenter);
  const [seconds, micros] = await redis.time();
  const now = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  const meta = await redis.hgetall(keys.meta);
  const expiries = await redis.zrange(keys.expiry, '0', '-1', 'WITHSCORES');
  const rows = [];
  for (let i = 0; i < expiries.length; i += 2) {
    const id = Number(expiries[i]);
    const expiry = Number(expiries[i + 1]);
    const record = await redis.hgetall(`${keys.recordPrefix}${id}`);
    const held = expiry > now;
    rows.push({
      workerId: id,
      state: held ? 'held' : 'free',
      host: held ? (record.host ?? '') : '',
      pid: held ? (record.pid ?? '') : '',
      expiresInMs: held ? expiry - now : null,
      ceiling: ceilingOf(record),
    });
  }
  rows.sort((a, b) => a.workerId - b.workerId);
  // Counted as the claim and renewal scripts count it (ZCOUNT of live expiries against the server's TIME), so that
  // the table agrees with status().lease.capacity and the health details.
  const held = await redis.zcount(keys.expiry, `(${now}`, '+inf');
  const size = 2 ** args.layout.workerBits;
  const capacity = capacityOf(size, held, lowCapacityAtFree(args.lowCapacityWarning, size), now);
  const settlingInMs =
    meta.created === undefined ? null : Math.max(0, Number(meta.created) + Number(meta.settleMs ?? 0) - now);
  const summary = {
    namespace: args.namespace,
    datacenterId: args.datacenter,
    exists: meta.marker !== undefined,
    held: capacity.held,
    free: capacity.free,
    capacity: capacity.size,
    low: capacity.low,
    settling: settlingInMs !== null && settlingInMs > 0,
    settlingInMs,
    configuration: meta.config ?? null,
  };
  if (args.json) return { output: json({ ...summary, leases: rows }) };
  return { output: `${table([summary])}\n\n${table(rows)}` };
}

function ceilingOf(record: Record<string, string>): string {
  const ceiling = Math.max(Number(record.ceiling ?? -1), Number(record.noted ?? -1));
  if (Number.isNaN(ceiling)) return '(invalid)';
  if (ceiling < 0) return '';
  // One record's corrupt value shows as such; the table of every other lease is still printed.
  return Number.isFinite(ceiling) && ceiling <= MAX_DATE_MS ? new Date(ceiling).toISOString() : '(invalid)';
}

/** The latest time a Date holds (ECMAScript: 8.64e15 ms after 1970). */
const MAX_DATE_MS = 8.64e15;

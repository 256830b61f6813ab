// One process of the chaos run: boots SnowflakeModule through Nest with a Redis lease (through the run's proxy) and
// issues IDs until told to stop, mixing next(), nextBatch(), nextAsync() and nextBatchAsync().
//
//   node worker.mjs '<json config>'
//
// - Every issued ID is appended to `config.out` with a synchronous write before it is counted or anything else runs,
//   so the file holds every ID this process handed out, even if it is killed right after.
// - Events go to stdout as JSON lines: up (signal handlers installed: only now may the run signal it), ready, error,
//   stats (cumulative counts, every `statsEveryMs`), worker (the worker ID changed), stall, log, loaded, stopped.
// - SIGTERM (or SIGINT): stop issuing, close the app (which releases the lease), report `stopped`, exit 0; during
//   the boot, exit at once (nothing issued; a lease claimed in that instant lapses after its TTL).
// - SIGUSR2: busy-wait (the event loop stalls) for the number of ms written in `config.stallFile`.
// - with `gate`, the process loads everything, reports `loaded` and claims only once it reads `go` on stdin.
// - stdin closing (the run went away) ends the process.
import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';

const config = JSON.parse(process.argv[2]);

function emit(event) {
  process.stdout.write(`${JSON.stringify(event)}\n`);
}

let stopping = false;
let stopRequested = () => undefined;
const stopSignal = new Promise((resolve) => (stopRequested = resolve));

// Handlers first, before the slow imports below: a signal that arrives before its handler is installed kills Node.
// SIGINT too: Ctrl-C in a terminal reaches the whole process group, and the run then stops as it would anyway.
// A process still booting (waiting while the namespace settles, say) has issued nothing and holds no lease it
// could release: it stops at once, as a deployment's stop would, rather than after its boot.
let booted = false;
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, () => {
    stopping = true;
    stopRequested();
    if (!booted) {
      emit({ event: 'stopped', issued: 0, lastTimestampMs: null, duringBoot: true });
      process.exit(0);
    }
  });
}
process.on('SIGUSR2', () => {
  let ms = 0;
  try {
    ms = Number(readFileSync(config.stallFile, 'utf8').trim()) || 0;
  } catch {
    // No stall asked for.
  }
  emit({ event: 'stall', phase: 'begin', ms });
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // Busy: nothing else in this process runs, renewals included.
  }
  emit({ event: 'stall', phase: 'end', ms });
});
let released = () => undefined;
const go = new Promise((resolve) => (released = resolve));
let input = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  input += chunk;
  if (input.includes('go\n')) released();
});
process.stdin.on('close', () => process.exit(1));
emit({ event: 'up', pid: process.pid });

await import('reflect-metadata');
const { NestFactory } = await import('@nestjs/core');
const { IdService, SnowflakeModule } = await import('../../dist/index.js');
await import('ioredis');

if (config.gate) {
  // Everything is loaded: the claim starts within milliseconds of `go`, so that the run can time it exactly.
  emit({ event: 'loaded' });
  await Promise.race([go, stopSignal]);
  if (stopping) {
    emit({ event: 'stopped', issued: 0, lastTimestampMs: null });
    process.exit(0);
  }
}

function describeError(error) {
  return {
    name: error?.name ?? 'Error',
    message: String(error?.message ?? error).slice(0, 500),
    reason: error?.reason,
  };
}

const logger = {
  log: (message, context) => emit({ event: 'log', level: 'log', context, message: String(message) }),
  error: (message, ...rest) => emit({ event: 'log', level: 'error', context: rest.at(-1), message: String(message) }),
  warn: (message, context) => emit({ event: 'log', level: 'warn', context, message: String(message) }),
  debug: () => undefined,
  verbose: () => undefined,
};

/** With Sentinel the process builds its own client, so that the addresses Sentinel announces go through the proxy. */
async function sentinelClient() {
  const { Redis } = await import('ioredis');
  const { sentinels, name, natMap } = config.sentinel;
  const client = new Redis({
    sentinels,
    name,
    natMap: (key) => natMap[key] ?? null,
    connectTimeout: config.redis?.connectTimeoutMs ?? 2000,
    // As the lease's own client: fail fast while disconnected, a late renewal is worth nothing.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: (times) => Math.min(times * 100, 1000),
    sentinelRetryStrategy: (times) => Math.min(times * 100, 1000),
  });
  client.on('error', () => undefined);
  return client;
}

/**
 * With a Cluster, an ioredis Cluster client of the process's own: the nodes announce proxies (see
 * cluster-topology.mjs), which `natMap` maps back to their real ports.
 */
async function clusterClient() {
  const { Cluster } = await import('ioredis');
  const { startupNodes, natMap } = config.cluster;
  const client = new Cluster(startupNodes, {
    natMap,
    redisOptions: { connectTimeout: config.redis?.connectTimeoutMs ?? 2000 },
    clusterRetryStrategy: (times) => Math.min(times * 100, 1000),
  });
  client.on('error', () => undefined);
  return client;
}

const out = openSync(config.out, 'a');
const startedAt = performance.now();
let client;
let app;
try {
  const redis = { namespace: config.namespace, ttlMs: config.ttlMs, ...config.redis };
  if (config.sentinel !== undefined) {
    client = await sentinelClient();
    redis.client = client;
  } else if (config.cluster !== undefined) {
    client = await clusterClient();
    redis.client = client;
  } else {
    redis.url = config.url;
  }
  app = await NestFactory.createApplicationContext(
    SnowflakeModule.forRoot({ layout: config.layout, clockBackToleranceMs: config.clockBackToleranceMs, redis }),
    { logger, abortOnError: false },
  );
} catch (error) {
  emit({ event: 'error', phase: 'bootstrap', ...describeError(error) });
  client?.disconnect();
  process.exit(2);
}

booted = true;
const ids = app.get(IdService);
let issued = 0;
let workerId = ids.workerId;
const refusals = {};
const workerShift = config.layout.sequenceBits;
const workerMask = (1n << BigInt(config.layout.workerBits)) - 1n;
emit({ event: 'ready', workerId, bootMs: Math.round(performance.now() - startedAt) });

/** Appends the IDs to the file before anything else can happen, then counts them. */
function record(batch) {
  if (batch.length === 0) return;
  writeSync(out, `${batch.join('\n')}\n`);
  issued += batch.length;
  const last = Number((batch[batch.length - 1] >> BigInt(workerShift)) & workerMask);
  if (last !== workerId) {
    workerId = last;
    emit({ event: 'worker', workerId });
  }
}

function refusalKey(error) {
  if (error?.name === 'WorkerUnavailableError' || error?.name === 'WorkerWaitTimeoutError') {
    return `unavailable:${error.reason}`;
  }
  return error?.name ?? 'Error';
}

function report() {
  const lease = ids.status().lease;
  emit({
    event: 'stats',
    issued,
    refusals,
    workerId,
    state: lease?.state ?? null,
    offsetMs: lease?.clockOffsetMs,
    lastError: lease?.lastError ?? null,
  });
}

const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const size = () => 1 + Math.floor(Math.random() * 32);

function refused(error) {
  const key = refusalKey(error);
  refusals[key] = (refusals[key] ?? 0) + 1;
}

let asyncInFlight = false;

/**
 * nextAsync() and nextBatchAsync() wait (a re-claim, settling) while the synchronous calls go on and are refused,
 * one at a time. An async result is recorded in the continuation right after it is issued, before any other timer
 * runs, so the file keeps the order in which this process issued its IDs.
 */
function startAsync(roll) {
  asyncInFlight = true;
  const pending = roll < 0.65 ? ids.nextAsync().then((id) => [id]) : ids.nextBatchAsync(size());
  pending
    .then(record, refused)
    .catch((error) => fail(error))
    .finally(() => (asyncInFlight = false));
}

function fail(error) {
  emit({ event: 'error', phase: 'run', ...describeError(error) });
  process.exit(3);
}

async function generate() {
  while (!stopping) {
    const roll = Math.random();
    let batch;
    try {
      if (roll < 0.2 && !asyncInFlight) startAsync(roll / 0.2);
      else if (roll < 0.55) batch = [ids.next()];
      else batch = ids.nextBatch(size());
    } catch (error) {
      refused(error);
    }
    // Outside the try: an ID that cannot be recorded must end the process, not pass for a refusal.
    if (batch !== undefined) record(batch);
    // A refusal backs off a little, so that a fenced process does not spin.
    await pause(batch === undefined ? 5 : config.intervalMs);
  }
}

const timer = setInterval(report, config.statsEveryMs ?? 250);
const generating = generate().catch(fail);
await stopSignal;
clearInterval(timer);
const lastTimestampMs = ids.status().lastTimestampMs;
try {
  await app.close();
} catch (error) {
  emit({ event: 'error', phase: 'shutdown', ...describeError(error) });
}
await Promise.race([generating, pause(1000)]);
report();
closeSync(out);
client?.disconnect();
emit({ event: 'stopped', issued, lastTimestampMs });
process.exit(0);

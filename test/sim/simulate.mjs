#!/usr/bin/env node
// `npm run simulate -- --seconds 60 [--seed N] [--schedules N] [--rollbacks] [--without kind,kind] [--bug name]
// [--workers N] [--lua compiled|fengari]`: the lease simulator's search on a time budget (the simulator drives the
// real lease on its own simulated timers). The search is single-threaded, so it runs as N plain Node
// processes side by side (default: one per CPU), each on its own residue of the seeds (shards.mjs), and the command adds
// up their figures. Exits 1 on a violation in any worker, after printing that worker's report: the seed, the shrunk
// schedule and its timeline, and the command that replays the seed alone.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describeFigures } from './report-figures.mjs';
import { combineFigures, describeSeeds, exitCode, isClean, planShards, replayCommand } from './shards.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SEARCH_MAIN = fileURLToPath(new URL('./search-main.ts', import.meta.url));
// Each worker: the search in plain Node (search-main.ts says why not Jest). A young generation of 32 MB rather than
// 16: a schedule makes many short-lived objects (promises, replies), and fewer scavenges gave about a tenth more
// schedules per second here.
const NODE_FLAGS = ['--max-semi-space-size=32'];
const USAGE =
  'use --seconds N --seed N --schedules N --rollbacks --without kind,kind --bug name --workers N --lua compiled|fengari';

function fail(message) {
  process.stderr.write(`${message}; ${USAGE}\n`);
  process.exit(2);
}

const args = process.argv.slice(2);
const env = { ...process.env };
const names = {
  '--seconds': 'SIM_SECONDS',
  '--seed': 'SIM_SEED',
  '--schedules': 'SIM_SCHEDULES',
  '--without': 'SIM_WITHOUT',
  '--bug': 'SIM_BUG',
  '--lua': 'SIM_LUA',
};
env.SIM_SECONDS ??= '60';
let workers = availableParallelism();
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--rollbacks') env.SIM_ROLLBACKS = '1';
  else if (args[i] === '--workers' && args[i + 1] !== undefined) workers = Number(args[++i]);
  else if (names[args[i]] !== undefined && args[i + 1] !== undefined) env[names[args[i++]]] = args[i];
  else fail(`unknown argument ${args[i]}`);
}
if (!Number.isInteger(workers) || workers < 1) fail('--workers takes a whole number of 1 or more');
const seed = Number(env.SIM_SEED ?? 1);
if (!Number.isSafeInteger(seed)) fail('--seed takes a whole number');
const schedules = env.SIM_SCHEDULES === undefined ? undefined : Number(env.SIM_SCHEDULES);
if (schedules !== undefined && !(Number.isInteger(schedules) && schedules >= 0)) {
  fail('--schedules takes a whole number');
}

const plan = planShards({ seed, schedules, workers });
mkdirSync(join(ROOT, '.tmp'), { recursive: true });
const bundleDir = mkdtempSync(join(ROOT, '.tmp', 'sim-'));
const WORKER = await workerArgs(bundleDir);
const removeBundle = () => rmSync(bundleDir, { recursive: true, force: true });
if (plan.length === 1) {
  // One process, as before workers existed: its own output, its own exit code.
  const result = spawnSync(process.execPath, WORKER, { cwd: ROOT, env, stdio: 'inherit' });
  removeBundle();
  process.exit(result.status ?? 1);
}
const code = await runWorkers(plan);
removeBundle();
process.exit(code);

/**
 * The worker's command line: the search bundled once, for every worker, by esbuild (the compiler tsx runs on load),
 * into a directory of the project (so that its packages resolve). A bundle runs the same code as tsx does on load,
 * without two costs: the 2 s each worker spent compiling, and tsx's `keepNames`, which wraps every function it
 * creates in a call that names it (a tenth of the schedules per second here). Should bundling fail, tsx compiles on
 * load as before.
 */
async function workerArgs(dir) {
  try {
    const { build } = await import('esbuild');
    const outfile = join(dir, 'search-main.mjs');
    await build({
      entryPoints: [SEARCH_MAIN],
      outfile,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      packages: 'external',
      logLevel: 'silent',
    });
    return [...NODE_FLAGS, outfile];
  } catch (error) {
    process.stderr.write(`bundling the search failed (${error.message}); tsx compiles it on load instead\n`);
    return [...NODE_FLAGS, '--import', 'tsx', SEARCH_MAIN];
  }
}

/**
 * Runs one process per share, its output kept back (shown only if it fails) and its report read from a JSON
 * file. The first worker that fails stops the others, as one process stops at its first violation.
 */
async function runWorkers(shares) {
  const dir = mkdtempSync(join(tmpdir(), 'nestjs-snowflake-sim-'));
  const running = shares.map((share) => startWorker(share, join(dir, `worker-${share.index}.json`)));
  const stopAll = (signal) => {
    for (const worker of running) if (worker.exitCode === undefined) worker.child.kill(signal);
  };
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.on(signal, () => {
      stopAll(signal);
      rmSync(dir, { recursive: true, force: true });
      removeBundle();
      process.exit(signal === 'SIGINT' ? 130 : 143);
    });
  }
  process.stdout.write(
    `${shares.length} workers (one process each): ${shares.map((share) => describeSeeds(share)).join('; ')}\n`,
  );
  try {
    const finished = await Promise.all(
      running.map(async (worker) => {
        await worker.ended;
        process.stdout.write(`${describeWorker(worker, shares.length)}\n`);
        if (!isClean(worker)) {
          for (const other of running) {
            if (other.exitCode === undefined && !other.stopped) {
              other.stopped = true;
              other.child.kill('SIGTERM');
            }
          }
        }
        return worker;
      }),
    );
    const summaries = finished.map((worker) => worker.summary).filter((summary) => summary !== undefined);
    if (summaries.length > 0) {
      process.stdout.write(`\ntotals of ${summaries.length} of ${shares.length} workers:\n`);
      process.stdout.write(`${describeFigures(combineFigures(summaries)).join('\n')}\n`);
    }
    // A worker stopped mid-search has nothing to show; one that failed by itself does.
    for (const worker of finished.filter((one) => !isClean(one) && !(one.stopped && one.summary === undefined))) {
      process.stdout.write(`\n--- worker ${worker.share.index + 1} (${describeSeeds(worker.share)}), its output:\n`);
      process.stdout.write(worker.output.join(''));
      const found = worker.summary?.found;
      if (found !== undefined) {
        const run = {
          seed: found.seed,
          rollbacks: env.SIM_ROLLBACKS === '1',
          without: env.SIM_WITHOUT,
          bug: env.SIM_BUG,
        };
        process.stdout.write(`\nreplay it alone: ${replayCommand(run)}\n`);
      }
    }
    return exitCode(finished);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function startWorker(share, summaryFile) {
  const workerEnv = {
    ...env,
    SIM_SEED: String(share.seed),
    SIM_SEED_STRIDE: String(share.stride),
    SIM_SUMMARY_FILE: summaryFile,
  };
  if (share.schedules !== undefined) workerEnv.SIM_SCHEDULES = String(share.schedules);
  const child = spawn(process.execPath, WORKER, {
    cwd: ROOT,
    env: workerEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const worker = { share, child, output: [], exitCode: undefined, summary: undefined, stopped: false };
  for (const stream of [child.stdout, child.stderr]) {
    // Decoded as a stream, so that a character split between two chunks stays whole.
    stream.setEncoding('utf8');
    stream.on('data', (text) => worker.output.push(text));
  }
  worker.ended = new Promise((resolve) => {
    child.on('close', (code) => {
      worker.exitCode = code;
      worker.summary = readSummary(summaryFile);
      resolve();
    });
  });
  return worker;
}

function readSummary(file) {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
}

function describeWorker(worker, count) {
  const name = `worker ${worker.share.index + 1} of ${count} (${describeSeeds(worker.share)})`;
  if (worker.stopped && worker.summary === undefined) return `${name}: stopped, another worker failed`;
  if (worker.summary === undefined) return `${name}: exited with code ${worker.exitCode} and no report`;
  const { schedules, wallMs, found } = worker.summary;
  const seconds = wallMs / 1000;
  const figures = `${schedules} schedules in ${seconds.toFixed(1)} s (${(schedules / seconds).toFixed(2)} per second)`;
  if (found !== undefined) return `${name}: ${figures}, VIOLATION (${found.violation.kind}) with seed ${found.seed}`;
  return `${name}: ${figures}${worker.exitCode === 0 ? '' : `, then exited with code ${worker.exitCode}`}`;
}

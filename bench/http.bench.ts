/**
 * IDs over HTTP: a Nest app with a Redis lease answers `GET /id` (a fresh ID, as a decimal string) and `GET /now`
 * (`Date.now()`, the bare route), on Express and on Fastify, under 64 keep-alive connections from a load generator
 * in a process of its own (bench/http-load.ts). The ratio of the two routes' requests per second, in the same app
 * and run, is what a fresh ID costs a request. Then the same load on `/id` while the redis-server is killed (data
 * lost) and started again: no request may fail.
 */
import 'reflect-metadata';
import { Controller, Get, Inject, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { execFile } from 'node:child_process';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { IdService, SnowflakeModule, type SnowflakeModuleOptions } from 'nestjs-snowflake';
import { seedSettled } from './lease.bench.js';
import { type Bench, type Target, formatInt, markdownTable, median } from './harness.js';
import { startRedis } from './redis-process.js';

const CONNECTIONS = 64;
const RESTART_DOWN_MS = 500;
const TARGET_RATIO = 0.9;
// Compiled beside this file (see tsconfig.bench.json), as every bench module is.
const LOAD = fileURLToPath(new URL('./http-load.js', import.meta.url));
const run = promisify(execFile);

/** What http-load.ts prints: requests answered 2xx, errors by kind, requests per second, latency percentiles. */
interface LoadResult {
  ok: number;
  errors: Record<string, number>;
  rate: number;
  p50: number;
  p99: number;
}

async function load(url: string, durationMs: number): Promise<LoadResult> {
  const { stdout } = await run(process.execPath, [LOAD, url, String(CONNECTIONS), String(durationMs)]);
  return JSON.parse(stdout) as LoadResult;
}

function appModule(options: SnowflakeModuleOptions) {
  @Controller()
  class IdsController {
    constructor(@Inject(IdService) private readonly ids: IdService) {}

    @Get('id')
    id(): string {
      return this.ids.nextString();
    }

    @Get('now')
    now(): string {
      return String(Date.now());
    }
  }

  @Module({ imports: [SnowflakeModule.forRoot(options)], controllers: [IdsController] })
  class App {}
  return App;
}

async function listen(adapter: 'Express' | 'Fastify', options: SnowflakeModuleOptions) {
  const App = appModule(options);
  const app =
    adapter === 'Fastify'
      ? await NestFactory.create(App, new FastifyAdapter(), { logger: false })
      : await NestFactory.create(App, { logger: false });
  await app.listen(0, '127.0.0.1');
  const { port } = (app.getHttpServer() as Server).address() as AddressInfo;
  return { app, base: `http://127.0.0.1:${port}` };
}

export default {
  name: 'http',
  title: 'IDs over HTTP',

  async run({ settings, log }) {
    const { windowMs, repeats } = settings;
    const server = await startRedis();
    const rows: string[][] = [];
    const targets: Target[] = [];
    try {
      for (const adapter of ['Express', 'Fastify'] as const) {
        const options: SnowflakeModuleOptions = {
          layout: { workerBits: 10 },
          redis: { url: server.url, namespace: `http-${adapter}`, ttlMs: 3000 },
        };
        await seedSettled(server.client, options);
        const { app, base } = await listen(adapter, options);
        try {
          await load(`${base}/now`, Math.min(500, windowMs));
          await load(`${base}/id`, Math.min(500, windowMs));
          const results: Record<'now' | 'id', LoadResult[]> = { now: [], id: [] };
          for (let round = 0; round < repeats; round++) {
            for (const route of round % 2 === 0 ? (['now', 'id'] as const) : (['id', 'now'] as const)) {
              const result = await load(`${base}/${route}`, windowMs);
              results[route].push(result);
              log(`  ${adapter} /${route} round ${round + 1}/${repeats}: ${formatInt(result.rate)} req/s`);
            }
          }
          log(`  ${adapter} /id across a Redis restart`);
          const during = load(`${base}/id`, 2 * windowMs + RESTART_DOWN_MS);
          await new Promise((resolve) => setTimeout(resolve, windowMs / 2));
          await server.restart(RESTART_DOWN_MS);
          const restart = await during;
          const summary = (list: LoadResult[]) => ({
            rate: median(list.map((r) => r.rate)),
            p99: median(list.map((r) => r.p99)),
            errors: list.reduce((n, r) => n + Object.values(r.errors).reduce((a, b) => a + b, 0), 0),
          });
          const now = summary(results.now);
          const id = summary(results.id);
          const restartErrors = Object.values(restart.errors).reduce((a, b) => a + b, 0);
          const ratio = id.rate / now.rate;
          rows.push(
            [
              adapter,
              '`GET /now` (`Date.now()`)',
              formatInt(now.rate),
              `${now.p99.toFixed(2)} ms`,
              String(now.errors),
              '1×',
            ],
            [
              adapter,
              '`GET /id` (`nextString()`, Redis lease)',
              formatInt(id.rate),
              `${id.p99.toFixed(2)} ms`,
              String(id.errors),
              `${ratio.toFixed(3)}×`,
            ],
            [
              adapter,
              `\`GET /id\` across a Redis restart (${RESTART_DOWN_MS} ms down, data lost)`,
              formatInt(restart.rate),
              `${restart.p99.toFixed(2)} ms`,
              restartErrors === 0 ? '0' : JSON.stringify(restart.errors),
              `${(restart.rate / now.rate).toFixed(3)}×`,
            ],
          );
          targets.push(
            {
              name: `HTTP (${adapter}, ${CONNECTIONS} connections): \`GET /id\` / \`GET /now\` requests per second`,
              measured: `${ratio.toFixed(3)}×`,
              goal: `≥ ${TARGET_RATIO.toFixed(2)}×`,
              pass: ratio >= TARGET_RATIO && id.errors === 0,
            },
            {
              name: `HTTP (${adapter}): errors on \`GET /id\` across a Redis restart`,
              measured: String(restartErrors),
              goal: '0',
              pass: restartErrors === 0 && restart.ok > 0,
            },
          );
        } finally {
          await app.close();
        }
      }
    } finally {
      await server.stop();
    }
    return {
      sections: [
        `Requests per second (median of ${repeats} windows of ${windowMs} ms per route, alternating which goes first), ` +
          `${CONNECTIONS} keep-alive connections from a load generator in its own process, one app process; p99 ` +
          'latency; the last column is the route over `GET /now` of the same app.',
        markdownTable(['adapter', 'route', 'req/s', 'p99', 'errors', 'of `/now`'], rows, [
          'left',
          'left',
          'right',
          'right',
          'right',
          'right',
        ]),
      ],
      targets,
    };
  },
} satisfies Bench;

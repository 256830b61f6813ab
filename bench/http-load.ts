/**
 * A small HTTP load generator in a process of its own (as autocannon runs): `connections` keep-alive connections,
 * each sending GET requests one after another for `durationMs`. Prints one JSON line: requests answered 2xx,
 * errors (other statuses, socket errors), requests per second and latency percentiles in ms.
 *
 *   node .bench/http-load.js (compiled from bench/http-load.ts) <url> <connections> <durationMs>
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';

const [url, connectionsText, durationText] = process.argv.slice(2);
const connections = Number(connectionsText);
const durationMs = Number(durationText);
const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
const latencies: number[] = [];
let ok = 0;
const errors: Record<string, number> = {};
const end = performance.now() + durationMs;

function once(): Promise<void> {
  return new Promise((resolve) => {
    const started = performance.now();
    const request = http.get(url, { agent }, (response) => {
      response.resume();
      response.on('end', () => {
        latencies.push(performance.now() - started);
        const status = response.statusCode ?? 0;
        if (status >= 200 && status < 300) ok++;
        else errors[`HTTP ${status}`] = (errors[`HTTP ${status}`] ?? 0) + 1;
        resolve();
      });
    });
    request.on('error', (error: NodeJS.ErrnoException) => {
      const key = error.code ?? error.message;
      errors[key] = (errors[key] ?? 0) + 1;
      resolve();
    });
  });
}

async function connection() {
  while (performance.now() < end) await once();
}

const started = performance.now();
await Promise.all(Array.from({ length: connections }, connection));
const elapsed = performance.now() - started;
latencies.sort((a, b) => a - b);
const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN;
agent.destroy();
process.stdout.write(`${JSON.stringify({ ok, errors, rate: (ok * 1000) / elapsed, p50: at(0.5), p99: at(0.99) })}\n`);

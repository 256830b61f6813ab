/**
 * A small HTTP load generator in a process of its own (as autocannon runs): `connections` keep-alive connections,
 * each sending GET requests one after another for `durationMs`. Prints one JSON line: requests answered 2xx,
 * errors (other statuses, socket errors), requests per second and latency percentiles in ms.
 *
 *   node bench/http-load.js <url> <connections> <durationMs>
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';

const [url, connectionsText, durationText] = process.argv.slice(2);
const connections = Number(connectionsText);
const durationMs = Number(durationText);
const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
const latencies = [];
let ok = 0;
const errors = {};
const end = performance.now() + durationMs;

function once() {
  return new Promise((resolve) => {
    const started = performance.now();
    const request = http.get(url, { agent }, (response) => {
      response.resume();
      response.on('end', () => {
        latencies.push(performance.now() - started);
        if (response.statusCode >= 200 && response.statusCode < 300) ok++;
        else errors[`HTTP ${response.statusCode}`] = (errors[`HTTP ${response.statusCode}`] ?? 0) + 1;
        resolve();
      });
    });
    request.on('error', (error) => {
      errors[error.code ?? error.message] = (errors[error.code ?? error.message] ?? 0) + 1;
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
const at = (q) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN;
agent.destroy();
process.stdout.write(`${JSON.stringify({ ok, errors, rate: (ok * 1000) / elapsed, p50: at(0.5), p99: at(0.99) })}\n`);

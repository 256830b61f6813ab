/**
 * The command line, run as a user runs it: the built `dist/cli/main.js` in a child process.
 */
import { execFile } from 'node:child_process';
import { hostname } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SnowflakeCodec } from '../../lib/core/codec.js';
import { resolveLayout } from '../../lib/core/layout.js';
import { IdService } from '../../lib/module/id.service.js';
import { leaseKeys } from '../../lib/lease/lease.keys.js';
import { Redis } from 'ioredis';
import { settledSharedNamespace, uniqueNamespace } from '../support/shared-redis.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const cli = join(root, 'dist/cli/main.js');

function run(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const { NODE_OPTIONS: _jestFlags, ...env } = process.env;
  return new Promise((done) => {
    execFile(process.execPath, [cli, ...args], { cwd: root, env, timeout: 30_000 }, (error, stdout, stderr) => {
      done({ code: error === null ? 0 : ((error as { code?: number }).code ?? -1), stdout, stderr });
    });
  });
}

describe('npx nestjs-snowflake', () => {
  const twitter = new SnowflakeCodec(resolveLayout('twitter'));

  it('decodes IDs of a preset, as JSON and as a table', async () => {
    const id = twitter.compose({ timestamp: Date.UTC(2026, 10, 23, 12), datacenterId: 3, workerId: 17, sequence: 42 });
    const { code, stdout } = await run('decode', String(id), '--layout', 'twitter', '--json');
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual([
      { id: String(id), time: '2026-11-23T12:00:00.000Z', datacenterId: 3, workerId: 17, sequence: 42 },
    ]);
    const table = await run('decode', String(id), '--layout', 'twitter');
    expect(table.stdout).toMatch(/workerId[\s\S]*17/);
  });

  it('takes a layout as JSON', async () => {
    const layout = resolveLayout({ workerBits: 4, sequenceBits: 8 });
    const id = new SnowflakeCodec(layout).compose({ timestamp: Date.UTC(2026, 5, 1), workerId: 9, sequence: 7 });
    const { stdout } = await run('decode', String(id), '--layout', '{"workerBits":4,"sequenceBits":8}', '--json');
    expect(JSON.parse(stdout)[0]).toMatchObject({ workerId: 9, sequence: 7 });
  });

  it("decodes the shard of a 'sharded' ID", async () => {
    const sharded = new SnowflakeCodec(resolveLayout('sharded'));
    const id = sharded.compose({ timestamp: Date.UTC(2026, 10, 24), workerId: 200, sequence: 5, shard: 11 });
    const { code, stdout } = await run('decode', String(id), '--layout', 'sharded', '--json');
    expect(code).toBe(0);
    expect(JSON.parse(stdout)[0]).toEqual({
      id: String(id),
      time: '2026-11-24T00:00:00.000Z',
      datacenterId: 0,
      workerId: 200,
      sequence: 5,
      shard: 11,
    });
  });

  it('gives the bounds for WHERE id BETWEEN, those of the codec', async () => {
    const from = '2026-11-23T00:00:00.000Z';
    const to = '2026-11-24T00:00:00.000Z';
    const { code, stdout } = await run('range', '--from', from, '--to', to, '--json', '--layout', 'twitter');
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual({
      from,
      to,
      min: String(twitter.minIdAt(new Date(from))),
      max: String(twitter.maxIdAt(new Date(to))),
    });
  });

  it('fails a malformed ID with exit code 1 and the reason, a usage mistake with 2 and the usage', async () => {
    const malformed = await run('decode', '12ab', '--json');
    expect(malformed.code).toBe(1);
    expect(JSON.parse(malformed.stdout)).toEqual([]);
    expect(malformed.stderr).toMatch(/Invalid snowflake ID "12ab"/);
    const unknown = await run('explode');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown command "explode"');
    expect(unknown.stderr).toContain('Usage: nestjs-snowflake');
    const badDate = await run('range', '--from', 'yesterday-ish', '--to', '2026-01-01');
    expect(badDate.code).toBe(2);
    expect(badDate.stderr).toContain('--from: not a date');
    expect((await run('--help')).code).toBe(0);
  });

  it('prints the IDs that decode on stdout and the others on stderr, with exit code 1', async () => {
    const id = twitter.compose({ timestamp: Date.UTC(2026, 10, 23), workerId: 5 });
    const { code, stdout, stderr } = await run(
      'decode',
      String(id),
      '12ab',
      'x'.repeat(100_000),
      '--layout',
      'twitter',
    );
    expect(code).toBe(1);
    expect(stdout).toContain(String(id));
    expect(stdout).not.toContain('Invalid');
    expect(stderr).toContain('Invalid snowflake ID "12ab"');
    // The long input is named, not repeated.
    expect(stderr.length).toBeLessThan(1000);
  });

  it.each([
    ['x 2026'],
    ['foo 1'],
    ['\u0661\u0662\u0663'],
    ['2026-02-30'],
    ['2026-11-23T24:00:00Z'],
    ['2026-11-23T12:00'],
    ['1e12'],
    [' 1764000000000'],
  ])('refuses the date %j with exit code 2 instead of guessing', async (text) => {
    const { code, stdout, stderr } = await run('range', '--from', text, '--to', '2026-12-01');
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toContain('--from: not a date');
  });

  it('reads ISO 8601 dates, date-times with an offset and Unix milliseconds', async () => {
    const bounds = async (from: string) =>
      JSON.parse((await run('range', '--from', from, '--to', '2026-12-01', '--json')).stdout) as { from: string };
    expect((await bounds('2026-11-23')).from).toBe('2026-11-23T00:00:00.000Z');
    expect((await bounds('2026-11-23T13:30+01:00')).from).toBe('2026-11-23T12:30:00.000Z');
    expect((await bounds(String(Date.UTC(2026, 10, 23, 12)))).from).toBe('2026-11-23T12:00:00.000Z');
  });

  it.each([
    [['--datacenter', '']],
    [['--datacenter', '0x10']],
    [['--datacenter', '1e1']],
    [['--low-capacity-warning', '']],
    [['--redis', '']],
    [['--redis', 'localhost:6379']],
  ])('refuses %j for leases with exit code 2', async (options) => {
    const { code, stderr } = await run('leases', '--redis', 'redis://127.0.0.1:1', ...options);
    expect(code).toBe(2);
    expect(stderr).toMatch(/--(datacenter|low-capacity-warning|redis): expected/);
  });

  describe('leases', () => {
    let url: string;
    let namespace: string;
    const services: IdService[] = [];

    beforeAll(async () => {
      ({ url, namespace } = await settledSharedNamespace('cli'));
      for (let i = 0; i < 2; i++) {
        const ids = new IdService({ layout: { workerBits: 3 }, redis: { url, namespace } });
        await ids.onModuleInit();
        ids.next();
        services.push(ids);
      }
    }, 30_000);
    afterAll(async () => {
      for (const ids of services) await ids.onApplicationShutdown();
    });

    it('lists who holds which worker ID, with held and free counts', async () => {
      const { code, stdout } = await run(
        'leases',
        '--redis',
        url,
        '--namespace',
        namespace,
        '--layout',
        '{"workerBits":3}',
        '--json',
      );
      expect(code).toBe(0);
      const report = JSON.parse(stdout) as {
        held: number;
        free: number;
        capacity: number;
        settling: boolean;
        leases: { workerId: number; state: string; host: string; pid: string; expiresInMs: number }[];
      };
      expect(report).toMatchObject({ held: 2, free: 6, capacity: 8, exists: true });
      const held = report.leases.filter((lease) => lease.state === 'held');
      expect(held.map((lease) => lease.workerId).sort()).toEqual(services.map((s) => s.workerId).sort());
      for (const lease of held) {
        expect(lease).toMatchObject({ host: hostname(), pid: String(process.pid) });
        expect(lease.expiresInMs).toBeGreaterThan(0);
      }
    });

    it('prints what Redis holds as data, never as terminal control, and a corrupt ceiling as such', async () => {
      // Anyone who can write to Redis chooses these: escape sequences (a window title, colours, the cursor moved up),
      // a line break that would forge a row, a C1 CSI, and a ceiling no date holds.
      const hostile = uniqueNamespace('cli-hostile');
      const keys = leaseKeys({ namespace: hostile, allocateDatacenter: false }, 0);
      const redis = new Redis(url);
      try {
        const [seconds] = await redis.time();
        const live = Number(seconds) * 1000 + 60_000;
        await redis.hset(keys.meta, { marker: 'm', config: 'layout=x\x1b]0;PWNED\x07\x1b[31mRED\u009b2J' });
        await redis.zadd(keys.expiry, live, '1', live, '2');
        await redis.hset(`${keys.recordPrefix}1`, { host: 'web-1\n3  held  attacker-host  666', pid: '42\x1b[1A' });
        await redis.hset(`${keys.recordPrefix}2`, { host: 'web-2', pid: '7', ceiling: '1e20' });
        const printed = await run('leases', '--redis', url, '--namespace', hostile, '--layout', '{"workerBits":3}');
        expect({ code: printed.code, stderr: printed.stderr }).toEqual({ code: 0, stderr: '' });
        expect(printed.stdout).not.toMatch(/[^\n -~\u00a0-\uffff]/);
        expect(printed.stdout).toContain('web-1\\x0a3  held  attacker-host  666');
        expect(printed.stdout).toContain('42\\x1b[1A');
        expect(printed.stdout).toContain('layout=x\\x1b]0;PWNED\\x07\\x1b[31mRED\\x9b2J');
        expect(printed.stdout.split('\n').filter((line) => line.includes('attacker-host'))).toHaveLength(1);
        expect(printed.stdout).toMatch(/web-2 +7 +\d+ +\(invalid\)/);
        const asJson = await run(
          'leases',
          '--redis',
          url,
          '--namespace',
          hostile,
          '--layout',
          '{"workerBits":3}',
          '--json',
        );
        expect(asJson.code).toBe(0);
        expect(asJson.stdout).not.toMatch(/[^\n -~\u00a0-\uffff]/);
        const report = JSON.parse(asJson.stdout) as { configuration: string; leases: { host: string }[] };
        expect(report.configuration).toBe('layout=x\x1b]0;PWNED\x07\x1b[31mRED\u009b2J');
        expect(report.leases.map((lease) => lease.host)).toEqual(['web-1\n3  held  attacker-host  666', 'web-2']);
      } finally {
        await redis.del(keys.meta, keys.expiry, `${keys.recordPrefix}1`, `${keys.recordPrefix}2`);
        redis.disconnect();
      }
    });

    it('fails with exit code 1 when Redis cannot be reached', async () => {
      const { code, stderr } = await run('leases', '--redis', 'redis://127.0.0.1:1');
      expect(code).toBe(1);
      expect(stderr).toContain('ECONNREFUSED');
    });
  });
});

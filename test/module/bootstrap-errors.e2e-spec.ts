/**
 * Lease errors at bootstrap come out the way option errors do: reported by Nest's exception handler while the app
 * is built, the process exiting with 1, never as a raw unhandled rejection with a source excerpt. Run as a user's
 * main.ts runs, in a child process, against the built package.
 */
import { execFile } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../support/redis-server.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const fixture = join(root, 'test/module/fixtures/bootstrap-failure.mjs');

function boot(fault: 'option' | 'redis', port: number): Promise<{ code: number | null; output: string }> {
  const { NODE_OPTIONS: _jestFlags, ...env } = process.env;
  return new Promise((done) => {
    execFile(
      process.execPath,
      [fixture, fault, String(port)],
      { cwd: root, env, timeout: 30_000 },
      (error, out, err) => {
        // eslint-disable-next-line no-control-regex
        const output = `${out}${err}`.replace(/\x1b\[[0-9;]*m/g, '');
        done({ code: error === null ? 0 : ((error as { code?: number }).code ?? null), output });
      },
    );
  });
}

describe('errors at bootstrap', () => {
  it.each([
    ['option', 'SnowflakeConfigError', /Invalid snowflake option `workerId`/],
    ['redis', 'RedisUnavailableError', /ECONNREFUSED 127\.0\.0\.1:\d+\. To fix: nothing listens at that address/],
  ] as const)('a bad %s: reported by Nest as %s, exit code 1, no raw rejection', async (fault, name, detail) => {
    const { code, output } = await boot(fault, await freePort());
    expect(code).toBe(1);
    expect(output).toMatch(new RegExp(`ERROR \\[ExceptionHandler\\] ${name}: `));
    expect(output).toMatch(detail);
    // What an unhandled rejection looks like: Node's own report, with the source line and a caret under it.
    expect(output).not.toMatch(/^Node\.js v\d+/m);
    expect(output).not.toMatch(/^\s*\^+\s*$/m);
    expect(output).not.toContain('triggerUncaughtException');
  });
});

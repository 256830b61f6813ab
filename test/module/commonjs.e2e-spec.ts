import { execFile } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { SnowflakeCodec } from '../../lib/core/codec.js';
import { resolveLayout } from '../../lib/core/layout.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

describe('a CommonJS app', () => {
  it(`require()s the built package on Node ${process.version} and issues an ID`, async () => {
    const { NODE_OPTIONS: _jestFlags, ...env } = process.env;
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [join(root, 'test/module/fixtures/commonjs-app.cjs')],
      {
        cwd: root,
        env,
        timeout: 30_000,
      },
    );
    const { id } = JSON.parse(stdout.trim()) as { id: string };
    expect(new SnowflakeCodec(resolveLayout({ preset: 'twitter' })).decode(id).workerId).toBe(5);
  });
});

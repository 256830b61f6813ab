/**
 * The test tree's own rules: tests mirror `lib/`, and the two suffixes mean one thing each.
 * - `.spec.ts`: runs in the Jest process alone (pure logic, fake clocks, in-memory parts, a SQLite file).
 * - `.e2e-spec.ts`: talks to something outside it: a redis-server, a database server, a child process, or the app
 *   over HTTP.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const TEST = fileURLToPath(new URL('.', import.meta.url));
const LIB = fileURLToPath(new URL('../lib/', import.meta.url));

/** Directories of the test tree that test something other than a `lib/` folder. */
const NOT_MIRRORED = new Set(['support', 'chaos', 'sample', 'readme', 'fixtures', 'generated', 'fuzz', 'sim']);

/** What reaching outside the Jest process looks like in a test's imports and calls. */
const OUTSIDE = [
  /^import .* from '[./]*support\/(redis-server|shared-redis|id-workers)\.js';$/m,
  /^import .* from '(pg|mysql2|mysql2\/promise|node:child_process|supertest)';$/m,
  /^import .* from '\.\/(health\.fixture|sample-app\.harness)\.js';$/m,
  // The chaos run's real Redis servers and cluster (test/chaos), which e2e tests borrow.
  /^import .* from '[./]*chaos\/[\w-]+\.mjs';$/m,
  /\bawait (postgresReachable|mariadbReachable|createPostgresDatabase)\(/,
];

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return NOT_MIRRORED.has(name) ? [] : walk(path);
    return [path];
  });
}

const testFiles = walk(TEST).filter((path) => /\.(e2e-)?spec\.ts$/.test(path));

describe('the test tree', () => {
  it('mirrors lib/: every folder of tests names a folder of lib/', () => {
    const folders = new Set(testFiles.map((path) => relative(TEST, path).split('/').slice(0, -1).join('/')));
    folders.delete('');
    const strays = [...folders].filter((folder) => {
      try {
        return !statSync(join(LIB, folder)).isDirectory();
      } catch {
        return true;
      }
    });
    expect(strays).toEqual([]);
  });

  it.each(testFiles.map((path) => [relative(TEST, path), path]))(
    '%s: its suffix says whether it reaches outside the Jest process',
    (_name, path) => {
      const source = readFileSync(path, 'utf8');
      const reachesOut = OUTSIDE.some((pattern) => pattern.test(source));
      expect({ file: relative(TEST, path), e2e: path.endsWith('.e2e-spec.ts') }).toEqual({
        file: relative(TEST, path),
        e2e: reachesOut,
      });
    },
  );
});

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A fresh directory under the OS temp dir (or `parent`); `remove()` deletes it with everything in it. */
export function tempDirectory(
  prefix = 'snowflake-',
  parent = tmpdir(),
): { dir: string; path(name: string): string; remove(): void } {
  const dir = mkdtempSync(join(parent, prefix));
  return { dir, path: (name) => join(dir, name), remove: () => rmSync(dir, { recursive: true, force: true }) };
}

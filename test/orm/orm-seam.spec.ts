import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The ORM integrations sit downstream of the Nest module: they take an `IdIssuer`, and only the entry files
 * (`lib/typeorm.ts`, `lib/prisma.ts`) may join them to `IdService`. Read from the sources, so a back arrow fails here
 * before it ships.
 */
const lib = resolve(dirname(fileURLToPath(import.meta.url)), '../../lib');

function sourcesUnder(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    return entry.isDirectory() ? sourcesUnder(path) : entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** The library files a source imports, statically or with `import()`, as paths relative to lib/. */
function importsOf(file: string): string[] {
  const source = readFileSync(file, 'utf8');
  const specifiers = [
    ...source.matchAll(/^\s*(?:import|export)\s+(?:[^'";]*?\sfrom\s*)?['"](\.[^'"]+)['"]/gm),
    ...source.matchAll(/\bimport\(\s*['"](\.[^'"]+)['"]\s*\)/g),
  ].map((match) => match[1]);
  return specifiers.map((specifier) => relative(lib, resolve(dirname(file), specifier.replace(/\.js$/, '.ts'))));
}

describe('the ORM seam', () => {
  it('nothing under lib/orm imports lib/module', () => {
    const files = sourcesUnder(join(lib, 'orm'));
    expect(files.length).toBeGreaterThan(10);
    const backArrows = files.flatMap((file) =>
      importsOf(file)
        .filter((target) => target.startsWith('module/'))
        .map((target) => `${relative(lib, file)} → ${target}`),
    );
    expect(backArrows).toEqual([]);
  });

  it('the main entry reaches no file of lib/orm, so an app without an ORM loads none of it', () => {
    const seen = new Set<string>();
    const queue = ['index.ts'];
    while (queue.length > 0) {
      const file = queue.pop()!;
      if (seen.has(file)) continue;
      seen.add(file);
      queue.push(...importsOf(join(lib, file)));
    }
    expect(seen.has('module/snowflake.module.ts')).toBe(true);
    expect([...seen].filter((file) => file.startsWith('orm/'))).toEqual([]);
  });
});

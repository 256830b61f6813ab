import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const LIB = resolve(dirname(fileURLToPath(import.meta.url)), '../../lib');
/** Optional peers of the TypeORM integration, which the main entry must never load. */
const OPTIONAL = /^(typeorm|@nestjs\/typeorm|better-sqlite3|pg|mysql2)(\/|$)/;

/** Every module specifier a file loads at run time: static imports and re-exports (not `import type`), and import(). */
function runtimeImports(source: string): string[] {
  const specifiers: string[] = [];
  const statement = /^\s*(import|export)\s+(?!type\s)(?:[^'";]*?\sfrom\s+)?['"]([^'"]+)['"]/gm;
  for (const match of source.matchAll(statement)) specifiers.push(match[2]);
  for (const match of source.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)) specifiers.push(match[1]);
  return specifiers;
}

/** The bare (package) specifiers reachable from `entry` through relative imports, with the file that imports each. */
function reachablePackages(entry: string): Map<string, string> {
  const packages = new Map<string, string>();
  const seen = new Set<string>();
  const queue = [entry];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const specifier of runtimeImports(readFileSync(file, 'utf8'))) {
      if (specifier.startsWith('.')) queue.push(resolve(dirname(file), specifier.replace(/\.js$/, '.ts')));
      else if (!packages.has(specifier)) packages.set(specifier, file);
    }
  }
  return packages;
}

describe('entry points', () => {
  it('the main entry loads nothing from typeorm or its drivers, so apps without TypeORM still boot', () => {
    const packages = reachablePackages(join(LIB, 'index.ts'));
    expect(packages.has('@nestjs/common')).toBe(true);
    const optional = [...packages].filter(([specifier]) => OPTIONAL.test(specifier));
    expect(optional).toEqual([]);
  });

  it('the typeorm entry does load typeorm (the check above can see it)', () => {
    expect(reachablePackages(join(LIB, 'typeorm.ts')).has('typeorm')).toBe(true);
  });
});

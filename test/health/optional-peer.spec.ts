import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const lib = resolve(dirname(fileURLToPath(import.meta.url)), '../../lib');

/** Every module specifier a source file imports, statically or with `import()`. */
function specifiers(file: string): string[] {
  const source = readFileSync(file, 'utf8');
  const found: string[] = [];
  for (const match of source.matchAll(/(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g)) found.push(match[1]);
  return found;
}

/** The packages reachable from an entry through relative imports, with the file that imports each. */
function packagesReachableFrom(entry: string): Map<string, string> {
  const packages = new Map<string, string>();
  const seen = new Set<string>();
  const queue = [join(lib, entry)];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const specifier of specifiers(file)) {
      if (specifier.startsWith('.')) queue.push(resolve(dirname(file), specifier.replace(/\.js$/, '.ts')));
      else if (!packages.has(specifier)) packages.set(specifier, file);
    }
  }
  return packages;
}

describe('@nestjs/terminus stays an optional peer', () => {
  it('is never imported from the main entry, not even lazily', () => {
    const packages = packagesReachableFrom('index.ts');
    expect(packages.has('@nestjs/common')).toBe(true);
    expect([...packages.keys()].filter((name) => name.startsWith('@nestjs/terminus'))).toEqual([]);
  });

  it('is imported by the health entry', () => {
    expect(packagesReachableFrom('health.ts').has('@nestjs/terminus')).toBe(true);
  });
});

/**
 * The errors table of the docs and the error classes the package exports name the same set: a new error class needs
 * its row, and a row needs a class. The table is read from docs/errors.md, or from README.md's "## Errors" section
 * where there is no docs/errors.md.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Every entry of package.json `exports`, as its lib/ source: an entry added later is covered without a change here. */
async function entryModules(): Promise<object[]> {
  const manifest = JSON.parse(readFileSync(fileURLToPath(new URL('../../package.json', import.meta.url)), 'utf8')) as {
    exports: Record<string, unknown>;
  };
  const names = Object.keys(manifest.exports)
    .filter((entry) => entry !== './package.json')
    .map((entry) => (entry === '.' ? 'index' : entry.slice(2)));
  // One at a time: Jest's ESM loader fails on entries that link the same node: modules concurrently.
  const modules: object[] = [];
  for (const name of names) modules.push((await import(`../../lib/${name}.js`)) as object);
  return modules;
}

async function exportedErrorClasses(): Promise<string[]> {
  const names = new Set<string>();
  for (const module of await entryModules()) {
    for (const [name, value] of Object.entries(module)) {
      if (typeof value === 'function' && (value as { prototype?: unknown }).prototype instanceof Error) names.add(name);
    }
  }
  return [...names].sort();
}

function errorsTable(): { source: string; names: string[] } {
  const docs = fileURLToPath(new URL('../../docs/errors.md', import.meta.url));
  let source = 'docs/errors.md';
  let text: string;
  if (existsSync(docs)) {
    text = readFileSync(docs, 'utf8');
  } else {
    source = 'README.md';
    const readme = readFileSync(fileURLToPath(new URL('../../README.md', import.meta.url)), 'utf8');
    const start = readme.indexOf('\n## Errors\n');
    expect(start).toBeGreaterThan(-1);
    const end = readme.indexOf('\n## ', start + 1);
    text = readme.slice(start, end === -1 ? undefined : end);
  }
  // A row's first cell: | `SomeError` | when … |
  const names = [...text.matchAll(/^\|\s*`(\w+)`\s*\|/gm)].map((match) => match[1]);
  return { source, names: names.sort() };
}

describe('the errors table', () => {
  it('lists every exported error class once, and nothing else', async () => {
    const { source, names } = errorsTable();
    const classes = await exportedErrorClasses();
    expect(classes.length).toBeGreaterThan(20);
    expect({ source, missingFromTable: classes.filter((name) => !names.includes(name)) }).toEqual({
      source,
      missingFromTable: [],
    });
    expect({ source, notExported: names.filter((name) => !classes.includes(name)) }).toEqual({
      source,
      notExported: [],
    });
    expect(new Set(names).size).toBe(names.length);
  });
});

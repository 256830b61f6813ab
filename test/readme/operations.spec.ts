/**
 * docs/operations.md speaks of what the code does: every health reason and every refusal reason the code has is
 * explained there, no other, and every log line it quotes is one `lib/` writes (its fixed text, with `<…>` for what
 * varies, `…` for a part left out, and the numbers of constants written out).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const operations = readFileSync(join(root, 'docs/operations.md'), 'utf8');

/** The text of a section of operations.md: from its `## ` heading to the next one. */
function section(heading: string): string {
  const start = operations.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`docs/operations.md has no section "${heading}"`);
  const end = operations.indexOf('\n## ', start + 1);
  return operations.slice(start, end < 0 ? undefined : end);
}

/** The first cells of a section's table rows, when they are one code span: `` | `settling` | … ``. */
function firstCells(text: string): string[] {
  return [...text.matchAll(/^\| `([^`]+)` +\|/gm)].map((match) => match[1]);
}

/** The quoted strings of a TypeScript union type declared in `file`. */
function unionMembers(file: string, type: string): string[] {
  const source = readFileSync(join(root, file), 'utf8');
  const declaration = new RegExp(`export type ${type} =([^;]+);`).exec(source);
  if (declaration === null) throw new Error(`${file} declares no type ${type}`);
  return [...declaration[1].matchAll(/'([^']+)'/g)].map((match) => match[1]);
}

/** Every TypeScript source under `lib/`, with string concatenations across lines joined, as the log prints them. */
function librarySource(): string {
  const files = (readdirSync(join(root, 'lib'), { recursive: true }) as string[]).filter((file) =>
    file.endsWith('.ts'),
  );
  return files
    .map((file) => readFileSync(join(root, 'lib', file), 'utf8'))
    .join('\n')
    .replace(/['`]\s*\+\s*['`]/g, '');
}

describe('docs/operations.md', () => {
  it('explains every health reason of the indicator, and no other', () => {
    const documented = firstCells(section('Health reasons'));
    expect(documented.sort()).toEqual(unionMembers('lib/health/snowflake.health.ts', 'SnowflakeDownReason').sort());
  });

  it('explains every reason a WorkerUnavailableError can carry, and no other', () => {
    const documented = firstCells(section('Refusals: `WorkerUnavailableError` reasons'));
    expect(documented.sort()).toEqual(unionMembers('lib/core/worker.errors.ts', 'WorkerUnavailableReason').sort());
  });

  it('quotes only log lines that lib/ writes', () => {
    const source = librarySource();
    const lines = [...section('Log lines').matchAll(/^\| (?:log|warn|error) +\| `([^`]+)` +\|/gm)].map((m) => m[1]);
    expect(lines.length).toBeGreaterThan(30);
    const unknown = lines.filter((line) =>
      line
        .split(/<[^>]*>|…|\d+/) // numbers: constants the code fills in (503, 10 s)
        .map((fragment) => fragment.trim())
        .filter((fragment) => fragment.length >= 6)
        .some((fragment) => !source.includes(fragment)),
    );
    expect(unknown).toEqual([]);
  });
});

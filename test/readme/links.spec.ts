/**
 * The documentation's links hold: every relative link of the README, the docs pages, ARCHITECTURE.md,
 * CONTRIBUTING.md, the CHANGELOG and the sample's README names a file that exists, and every `#anchor` a heading of
 * the page it points to. The README links every docs page, and its install line names every package its code
 * imports.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { markdownBlocks, typeScriptBlocks } from './readme-blocks.js';
import { headingAnchors, isExternal, markdownLinks, slug, type MarkdownLink } from './markdown-links.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const DOCS = readdirSync(join(root, 'docs'))
  .filter((name) => name.endsWith('.md'))
  .map((name) => `docs/${name}`);
const FILES = ['README.md', 'ARCHITECTURE.md', 'CONTRIBUTING.md', 'CHANGELOG.md', 'sample-app/README.md', ...DOCS];

const read = (file: string) => readFileSync(join(root, file), 'utf8');
const links = FILES.flatMap((file) => markdownLinks(file, read(file))).filter((link) => !isExternal(link.target));
const where = (link: MarkdownLink) => `${link.file}:${link.line} → ${link.target}`;

/** The file a link points to, relative to the repository ('' for none). */
function targetFile(link: MarkdownLink): string {
  const path = decodeURIComponent(link.target.split('#')[0]);
  return path === '' ? link.file : relative(root, resolve(root, dirname(link.file), path));
}

describe('the links of the documentation', () => {
  it('has pages with links to check', () => {
    expect(DOCS.length).toBeGreaterThan(10);
    expect(links.length).toBeGreaterThan(50);
  });

  it('points every relative link to a file or folder of the repository', () => {
    const broken = links.filter((link) => !existsSync(join(root, targetFile(link)))).map(where);
    expect(broken).toEqual([]);
  });

  it('points every #anchor to a heading of its page', () => {
    const anchors = new Map<string, Set<string>>();
    const anchorsOf = (file: string) => {
      if (!anchors.has(file)) anchors.set(file, new Set(headingAnchors(read(file))));
      return anchors.get(file)!;
    };
    const broken = links
      .filter((link) => link.target.includes('#'))
      .filter((link) => {
        const file = targetFile(link);
        if (!file.endsWith('.md') || !existsSync(join(root, file)) || !statSync(join(root, file)).isFile()) return true;
        return !anchorsOf(file).has(decodeURIComponent(link.target.split('#')[1]));
      })
      .map(where);
    expect(broken).toEqual([]);
  });

  it('keeps the README a front door of at most 250 lines', () => {
    expect(read('README.md').split('\n').length).toBeLessThanOrEqual(250);
  });

  it('links every docs page from the README', () => {
    const linked = new Set(links.filter((link) => link.file === 'README.md').map((link) => targetFile(link)));
    expect(DOCS.filter((page) => !linked.has(page))).toEqual([]);
  });

  it("names in the README's install line every package the README's code imports", () => {
    const readme = markdownBlocks('README.md', read('README.md'));
    const install = readme.find((block) => block.lang === 'sh' && /npm install /.test(block.code));
    expect(install).toBeDefined();
    const installed = new Set(install!.code.replace(/#.*$/gm, '').split(/\s+/));
    const imported = new Set(
      typeScriptBlocks(readme).flatMap((block) =>
        [...`${block.prelude}\n${block.code}`.matchAll(/\bfrom\s+'([^']+)'/g)]
          .map((match) => match[1])
          .filter((specifier) => !specifier.startsWith('.') && !specifier.startsWith('node:'))
          .map((specifier) =>
            specifier
              .split('/')
              .slice(0, specifier.startsWith('@') ? 2 : 1)
              .join('/'),
          ),
      ),
    );
    expect(imported.size).toBeGreaterThan(0);
    expect([...imported].filter((name) => !installed.has(name))).toEqual([]);
  });
});

describe('reading headings and links as GitHub does', () => {
  it('makes anchors of headings: lower case, punctuation dropped, spaces made hyphens, repeats numbered', () => {
    expect(slug('Even low bits for `id % N`')).toBe('even-low-bits-for-id--n');
    expect(slug("The lease's phases")).toBe('the-leases-phases');
    expect(slug('Restart safety for a fixed worker ID: `ceilingFile`')).toBe(
      'restart-safety-for-a-fixed-worker-id-ceilingfile',
    );
    expect(slug('[TypeORM](x.md): `@GeneratedId()`')).toBe('typeorm-generatedid');
    expect(headingAnchors('# A\n\n## B\n\n```sh\n# not a heading\n```\n\n## B\n## B')).toEqual([
      'a',
      'b',
      'b-1',
      'b-2',
    ]);
  });

  it('finds links outside code, with their lines', () => {
    const text = [
      'See [the lease](docs/lease.md#guarantees) and [x](#install).', // 1
      '`[not](a-link.md)`', // 2
      '```md', // 3
      '[not](either.md)', // 4
      '```', // 5
      '<!--', // 6
      '[nor](this.md)', // 7
      '-->', // 8
      '| [row](docs/cli.md) |', // 9
    ].join('\n');
    expect(markdownLinks('R.md', text)).toEqual([
      { file: 'R.md', line: 1, target: 'docs/lease.md#guarantees' },
      { file: 'R.md', line: 1, target: '#install' },
      { file: 'R.md', line: 9, target: 'docs/cli.md' },
    ]);
    expect(isExternal('https://fast-check.dev/')).toBe(true);
    expect(isExternal('docs/cli.md')).toBe(false);
  });
});

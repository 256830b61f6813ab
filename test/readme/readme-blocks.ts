/**
 * The code blocks of a markdown file, with the two markers the README's TypeScript blocks may carry. Every ```ts
 * block is a module of its own; an HTML comment right above its fence (blank lines allowed in between) can add:
 *
 * - `<!-- ts-prelude` … `-->`: code put before the block when it is compiled, for a fragment that needs imports or
 *   `declare const app: INestApplication;`. It does not show on the rendered page.
 * - `<!-- ts-run: GET /ids/next, GET /ids/{id} -->`: the block is an app that is run: with REDIS_URL (a redis-server
 *   of the test) and PORT (a free port) in its environment, it must answer each request in turn with 200 and JSON;
 *   `{id}` stands for the `id` field of the previous answer.
 *
 * Other comments above a fence (`<!-- prettier-ignore -->`) are left alone.
 */

/** One fenced code block. Lines are 1-based lines of the markdown file. */
export interface MarkdownBlock {
  /** The markdown file, as given to {@link markdownBlocks}. */
  file: string;
  /** The line of the opening fence. */
  line: number;
  /** The info string's first word: `ts`, `sh`, `prisma`, … */
  lang: string;
  /** The block's text, without the fences and without the indentation of the opening fence. */
  code: string;
  /** The `ts-prelude` comment's code, or `''`. */
  prelude: string;
  /** The line where the prelude's code begins (0 without one). */
  preludeLine: number;
  /** The requests of a `ts-run` marker; `undefined` for a block that is only compiled. */
  run?: string[];
}

const FENCE = /^(\s*)(`{3,}|~{3,})\s*([\w-]*)/;

/** The fenced code blocks of `text`, in order, with the markers above each. */
export function markdownBlocks(file: string, text: string): MarkdownBlock[] {
  const lines = text.split('\n');
  const blocks: MarkdownBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]);
    if (open === null) continue;
    const [, indent, fence, lang] = open;
    let end = i + 1;
    while (end < lines.length && !isClosingFence(lines[end], fence)) end++;
    if (end === lines.length) throw new Error(`${file}:${i + 1}: the code block opened here is never closed.`);
    const code = lines
      .slice(i + 1, end)
      .map((line) => (line.startsWith(indent) ? line.slice(indent.length) : line.trimStart()))
      .join('\n');
    blocks.push({ file, line: i + 1, lang: lang.toLowerCase(), code, ...markers(file, lines, i) });
    i = end;
  }
  return blocks;
}

/** The blocks of TypeScript: `ts` and `typescript`. */
export function typeScriptBlocks(blocks: MarkdownBlock[]): MarkdownBlock[] {
  return blocks.filter((block) => block.lang === 'ts' || block.lang === 'typescript');
}

/** A block as a module: its prelude, then its code, as one file. */
export function moduleSource(block: MarkdownBlock): string {
  // `export {}` makes a block without imports a module too, so that blocks never share a global scope.
  return `${[block.prelude, block.code, 'export {};'].filter((part) => part !== '').join('\n')}\n`;
}

/**
 * The markdown line of a line of {@link moduleSource}'s output (both 1-based): in the prelude, the comment's line;
 * in the code, the block's line.
 */
export function markdownLine(block: MarkdownBlock, moduleLine: number): number {
  const preludeLines = block.prelude === '' ? 0 : block.prelude.split('\n').length;
  if (moduleLine <= preludeLines) return block.preludeLine + moduleLine - 1;
  return block.line + moduleLine - preludeLines;
}

function isClosingFence(line: string, fence: string): boolean {
  const trimmed = line.trim();
  return trimmed.startsWith(fence) && /^(`+|~+)$/.test(trimmed) && trimmed[0] === fence[0];
}

/** The markers in the HTML comments right above the fence at `fenceIndex`. */
function markers(
  file: string,
  lines: string[],
  fenceIndex: number,
): Pick<MarkdownBlock, 'prelude' | 'preludeLine' | 'run'> {
  const found: Pick<MarkdownBlock, 'prelude' | 'preludeLine' | 'run'> = { prelude: '', preludeLine: 0 };
  let i = fenceIndex - 1;
  for (;;) {
    while (i >= 0 && lines[i].trim() === '') i--;
    if (i < 0 || !lines[i].trimEnd().endsWith('-->')) return found;
    const end = i;
    while (i >= 0 && !lines[i].includes('<!--')) i--;
    if (i < 0) return found;
    const start = i;
    const comment = lines
      .slice(start, end + 1)
      .join('\n')
      .replace(/^\s*<!--/, '')
      .replace(/-->\s*$/, '');
    const prelude = /^\s*ts-prelude[^\S\n]*\n([\s\S]*)$/.exec(comment);
    const run = /^\s*ts-run:\s*([\s\S]*?)\s*$/.exec(comment);
    if (prelude !== null) {
      found.prelude = prelude[1].replace(/\s+$/, '');
      found.preludeLine = start + 2;
    } else if (run !== null) {
      found.run = run[1].split(',').map((request) => request.trim());
      const malformed = found.run.find((request) => !/^GET \/\S*$/.test(request));
      if (malformed !== undefined) {
        throw new Error(`${file}:${start + 1}: ts-run takes requests such as "GET /ids/next", got "${malformed}".`);
      }
    } else if (/^\s*ts-/.test(comment)) {
      throw new Error(
        `${file}:${start + 1}: unknown marker "${comment.trim().split(/\s/)[0]}"; use ts-prelude or ts-run.`,
      );
    }
    i = start - 1;
  }
}

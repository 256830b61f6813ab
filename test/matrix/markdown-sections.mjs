/**
 * Picks code out of the documentation for the scripted newcomer (newcomer.mjs): the fenced blocks under a heading, and
 * the `npm install` lines of a shell block. Plain JavaScript, so that the matrix (a Node script, not compiled) can load
 * it; test/readme/readme-blocks.ts does the same fence parsing for the in-process block checks, with markers this
 * script does not need.
 *
 * Every function throws, naming the file and heading, when what it looks for is not there: a heading renamed or a
 * block removed fails the newcomer instead of being skipped.
 */

const FENCE = /^(\s*)(`{3,}|~{3,})\s*([\w-]*)/;

/** The fenced blocks of `text`: `{ line, lang, code, heading }`, `heading` being the nearest `#` heading above. */
export function fencedBlocks(text) {
  const lines = text.split('\n');
  const blocks = [];
  let heading = '';
  for (let i = 0; i < lines.length; i++) {
    const title = /^#{1,6}\s+(.*)$/.exec(lines[i]);
    if (title !== null) heading = title[1].trim();
    const open = FENCE.exec(lines[i]);
    if (open === null) continue;
    const [, indent, fence, lang] = open;
    let end = i + 1;
    while (end < lines.length && !(lines[end].trim().startsWith(fence) && /^(`+|~+)$/.test(lines[end].trim()))) end++;
    const code = lines
      .slice(i + 1, end)
      .map((line) => (line.startsWith(indent) ? line.slice(indent.length) : line.trimStart()))
      .join('\n');
    blocks.push({ line: i + 1, lang: lang.toLowerCase(), code, heading });
    i = end;
  }
  return blocks;
}

/** The first block of language `lang` (`ts`, `sh`, `json`) under the heading `heading` of `file`. */
export function blockUnder(file, text, heading, lang) {
  const block = fencedBlocks(text).find((candidate) => candidate.heading === heading && candidate.lang === lang);
  if (block === undefined) throw new Error(`${file}: no \`\`\`${lang} block under the heading "${heading}".`);
  return { ...block, where: `${file}:${block.line}` };
}

/**
 * The packages of the `npm install` lines of a shell block, comments dropped. `only` keeps the lines whose comment
 * contains it (getting-started's "one line per integration" block names each line's entry in its comment).
 */
export function installedPackages(block, only) {
  const packages = [];
  for (const line of block.code.split('\n')) {
    const [command, comment = ''] = line.split('#');
    const words = command.trim().split(/\s+/);
    if (words[0] !== 'npm' || words[1] !== 'install') continue;
    if (only !== undefined && !comment.includes(only)) continue;
    packages.push(...words.slice(2));
  }
  if (packages.length === 0) {
    throw new Error(`${block.where}: no \`npm install\` line${only === undefined ? '' : ` for ${only}`}.`);
  }
  return packages;
}

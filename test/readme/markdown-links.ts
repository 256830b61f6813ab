/**
 * The headings and links of a markdown file, read the way GitHub renders them: a heading's anchor is its text, lower
 * case, without punctuation, spaces made hyphens (github-slugger's rule), and `-1`, `-2`, … on repeats. Code blocks
 * and inline code are not read for links.
 */

/** A link written in a markdown file. `line` is 1-based. */
export interface MarkdownLink {
  file: string;
  line: number;
  /** The target as written: `docs/lease.md#guarantees`, `#install`, `https://…`. */
  target: string;
}

/** The anchors of the headings of `text`, in order, repeats numbered as GitHub numbers them. */
export function headingAnchors(text: string): string[] {
  const seen = new Map<string, number>();
  const anchors: string[] = [];
  for (const line of proseLines(text)) {
    const heading = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line.text);
    if (heading === null) continue;
    const base = slug(heading[1]);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.push(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

/** GitHub's anchor of a heading's markdown text. */
export function slug(heading: string): string {
  const rendered = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // a link shows its text
    .replace(/`/g, '')
    .replace(/<[^>]+>/g, '');
  return rendered
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
    .replace(/ /g, '-');
}

/** Every inline link and image of `text` (`[text](target)`), outside code blocks and inline code. */
export function markdownLinks(file: string, text: string): MarkdownLink[] {
  const links: MarkdownLink[] = [];
  for (const { line, text: prose } of proseLines(text)) {
    const withoutCode = prose.replace(/(`+)[^`]*?\1/g, (code) => ' '.repeat(code.length));
    for (const match of withoutCode.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      links.push({ file, line, target: match[1] });
    }
  }
  return links;
}

/** Whether a target leaves the repository (a URL or an e-mail address). */
export function isExternal(target: string): boolean {
  return /^[a-z][a-z0-9+.-]*:/i.test(target);
}

/** The lines of `text` outside fenced code blocks and HTML comments, with their 1-based numbers. */
function proseLines(text: string): { line: number; text: string }[] {
  const out: { line: number; text: string }[] = [];
  let fence: string | undefined;
  let inComment = false;
  text.split('\n').forEach((line, index) => {
    if (inComment) {
      if (line.includes('-->')) inComment = false;
      return;
    }
    const open = /^\s*(`{3,}|~{3,})/.exec(line);
    if (fence !== undefined) {
      if (open !== null && line.trim().startsWith(fence) && /^(`+|~+)$/.test(line.trim())) fence = undefined;
      return;
    }
    if (open !== null) {
      fence = open[1];
      return;
    }
    if (/^\s*<!--/.test(line) && !line.includes('-->')) {
      inComment = true;
      return;
    }
    out.push({ line: index + 1, text: line });
  });
  return out;
}

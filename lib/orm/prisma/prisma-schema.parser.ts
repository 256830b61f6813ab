import type { PrismaDatamodelLike, PrismaFieldLike, PrismaModelLike } from './prisma-datamodel.js';

const BLOCK_START = /^(model|view|type|enum|generator|datasource)\s+(\w+)\s*\{\s*$/;
const FIELD = /^(\w+)\s+(\w+)(\([^)]*\))?(\[\])?(\?)?/;
const RELATION = /@relation\(([^)]*)\)/;
const SCALARS = new Set(['String', 'Boolean', 'Int', 'BigInt', 'Float', 'Decimal', 'DateTime', 'Json', 'Bytes']);

/**
 * Reads models, fields and `///` doc comments from Prisma schema text: only what the extension needs, so no
 * engine and no generator are involved. A doc comment belongs to the field below it, or to the field on its
 * line when it trails the field (as in Prisma's own parser). Several files of a multi-file schema may be passed
 * as separate strings or concatenated.
 *
 * @internal
 */
export function parsePrismaSchema(text: string | readonly string[]): PrismaDatamodelLike {
  const source = typeof text === 'string' ? text : text.join('\n');
  const blocks = collectBlocks(source);
  const modelNames = new Set(blocks.filter((b) => b.keyword === 'model' || b.keyword === 'view').map((b) => b.name));
  const enumNames = new Set(blocks.filter((b) => b.keyword === 'enum').map((b) => b.name));
  const models: PrismaModelLike[] = blocks
    .filter((b) => b.keyword === 'model' || b.keyword === 'view')
    .map((b) => ({
      name: b.name,
      fields: b.fields.map((f): PrismaFieldLike => ({
        ...f,
        kind: SCALARS.has(f.type)
          ? 'scalar'
          : enumNames.has(f.type)
            ? 'enum'
            : modelNames.has(f.type)
              ? 'object'
              : f.type === 'Unsupported'
                ? 'unsupported'
                : 'object',
      })),
    }));
  return { models };
}

interface RawBlock {
  keyword: string;
  name: string;
  fields: Array<Omit<PrismaFieldLike, 'kind'>>;
}

function collectBlocks(source: string): RawBlock[] {
  const blocks: RawBlock[] = [];
  let current: RawBlock | undefined;
  let docs: string[] = [];
  let inBlockComment = false;
  for (const raw of source.split(/\r?\n/)) {
    let line = raw.trim();
    if (inBlockComment) {
      const end = line.indexOf('*/');
      if (end < 0) continue;
      inBlockComment = false;
      line = line.slice(end + 2).trim();
    }
    if (line.startsWith('/*')) {
      inBlockComment = !line.includes('*/');
      continue;
    }
    if (line.startsWith('///')) {
      docs.push(line.slice(3).trim());
      continue;
    }
    const { code, trailingDoc } = splitComment(line);
    if (code === '') continue;
    if (current === undefined) {
      const start = BLOCK_START.exec(code);
      if (start) {
        current = { keyword: start[1], name: start[2], fields: [] };
        blocks.push(current);
      }
      docs = [];
      continue;
    }
    if (code.startsWith('}')) {
      current = undefined;
      docs = [];
      continue;
    }
    const field = code.startsWith('@@') ? null : FIELD.exec(code);
    if (field && current.keyword !== 'enum' && current.keyword !== 'generator' && current.keyword !== 'datasource') {
      const documentation = [...docs, ...(trailingDoc === undefined ? [] : [trailingDoc])].join('\n');
      current.fields.push({
        name: field[1],
        type: field[2],
        isList: field[4] !== undefined,
        ...(documentation === '' ? {} : { documentation }),
        ...relationOf(code),
      });
    }
    docs = [];
  }
  return blocks;
}

/** The name and key fields of a field's `@relation(...)` attribute, if it has one. */
function relationOf(
  code: string,
): Pick<PrismaFieldLike, 'relationName' | 'relationFromFields' | 'relationToFields'> | undefined {
  const args = RELATION.exec(code)?.[1];
  if (args === undefined) return undefined;
  const name = /^\s*"([^"]*)"/.exec(args)?.[1] ?? /\bname\s*:\s*"([^"]*)"/.exec(args)?.[1];
  const list = (key: string) =>
    new RegExp(`\\b${key}\\s*:\\s*\\[([^\\]]*)\\]`)
      .exec(args)?.[1]
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item !== '');
  const from = list('fields');
  const to = list('references');
  return {
    ...(name === undefined ? {} : { relationName: name }),
    ...(from === undefined ? {} : { relationFromFields: from }),
    ...(to === undefined ? {} : { relationToFields: to }),
  };
}

/** Splits a line at its `//` comment, skipping `//` inside string literals such as `@default("http://…")`. */
function splitComment(line: string): { code: string; trailingDoc?: string } {
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === '\\' && quoted) {
      i++;
    } else if (c === '"') {
      quoted = !quoted;
    } else if (!quoted && c === '/' && line[i + 1] === '/') {
      const comment = line.slice(i);
      const code = line.slice(0, i).trim();
      return comment.startsWith('///') ? { code, trailingDoc: comment.slice(3).trim() } : { code };
    }
  }
  return { code: line };
}

import { markdownBlocks, markdownLine, moduleSource, typeScriptBlocks } from './readme-blocks.js';

const text = [
  '# Title', //                                  1
  '', //                                         2
  '```sh', //                                    3
  'npm install', //                              4
  '```', //                                      5
  '', //                                         6
  '<!-- ts-prelude', //                          7
  "import { IdService } from 'nestjs-snowflake';", // 8
  'declare const ids: IdService;', //           9
  '-->', //                                     10
  '', //                                        11
  '```ts', //                                   12
  'ids.next();', //                             13
  'ids.nextString();', //                       14
  '```', //                                     15
  '', //                                        16
  '- a list item:', //                          17
  '', //                                        18
  '  <!-- prettier-ignore -->', //              19
  '  <!-- ts-run: GET /ids/next, GET /ids/{id} -->', // 20
  '  ```typescript', //                         21
  '  const a = 1;', //                          22
  '    const b = 2;', //                        23
  '  ```', //                                   24
].join('\n');

describe('the code blocks of a markdown file', () => {
  const blocks = markdownBlocks('DOC.md', text);

  it('finds every fenced block with its language, line and text, without the fence indentation', () => {
    expect(blocks.map(({ line, lang, code }) => ({ line, lang, code }))).toEqual([
      { line: 3, lang: 'sh', code: 'npm install' },
      { line: 12, lang: 'ts', code: 'ids.next();\nids.nextString();' },
      { line: 21, lang: 'typescript', code: 'const a = 1;\n  const b = 2;' },
    ]);
    expect(typeScriptBlocks(blocks).map((block) => block.line)).toEqual([12, 21]);
  });

  it('reads a ts-prelude comment above a fence, and puts it before the code', () => {
    const [, fragment] = blocks;
    expect(fragment.prelude).toBe("import { IdService } from 'nestjs-snowflake';\ndeclare const ids: IdService;");
    expect(fragment.preludeLine).toBe(8);
    expect(moduleSource(fragment)).toBe(
      "import { IdService } from 'nestjs-snowflake';\ndeclare const ids: IdService;\nids.next();\nids.nextString();\nexport {};\n",
    );
  });

  it('maps a line of the module back to the markdown line, in the prelude and in the code', () => {
    const [, fragment, indented] = blocks;
    expect(markdownLine(fragment, 1)).toBe(8);
    expect(markdownLine(fragment, 2)).toBe(9);
    expect(markdownLine(fragment, 3)).toBe(13);
    expect(markdownLine(fragment, 4)).toBe(14);
    expect(markdownLine(indented, 2)).toBe(23);
  });

  it('reads the requests of a ts-run comment, past other comments', () => {
    expect(blocks.map((block) => block.run)).toEqual([undefined, undefined, ['GET /ids/next', 'GET /ids/{id}']]);
  });

  it('makes a block without imports a module of its own', () => {
    expect(moduleSource(blocks[2])).toBe('const a = 1;\n  const b = 2;\nexport {};\n');
  });

  it('fails on an unknown marker, a malformed request and an unclosed fence, naming the line', () => {
    expect(() => markdownBlocks('A.md', '<!-- ts-prelud -->\n```ts\n```')).toThrow(
      'A.md:1: unknown marker "ts-prelud"; use ts-prelude or ts-run.',
    );
    expect(() => markdownBlocks('A.md', 'x\n<!-- ts-run: POST /users -->\n```ts\n```')).toThrow(
      'A.md:2: ts-run takes requests such as "GET /ids/next", got "POST /users".',
    );
    expect(() => markdownBlocks('A.md', 'x\n```ts\nconst a = 1;')).toThrow(
      'A.md:2: the code block opened here is never closed.',
    );
  });
});

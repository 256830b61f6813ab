/**
 * The main entry's old names stay for one release as the same values as their new homes, so an app that upgrades
 * keeps its build and its DI tokens; and the new homes hold what the main entry no longer lists. The full list of
 * exports per entry is the API report in api/ (`npm run api:check`).
 */
import * as main from '../../lib/index.js';
import * as http from '../../lib/http.js';
import { checkNodeFitsLayout, resolveLayout } from '../../lib/core/layout.js';
import { formatId, parseIdText } from '../../lib/forms/format.js';
import { base62Form } from '../../lib/forms/radix.form.js';
import { SNOWFLAKE_GENERATOR } from '../../lib/module/snowflake.tokens.js';

describe('the main entry’s deprecated names', () => {
  it.each([
    'ParseSnowflakeIdPipe',
    'SnowflakeIdParam',
    'SnowflakeIdQuery',
    'SnowflakeExceptionFilter',
    'bigintsToStrings',
    'snowflakeJsonReplacer',
    'BigIntSerializerInterceptor',
  ] as const)('%s is the very value nestjs-snowflake/http exports', (name) => {
    expect(main[name]).toBeDefined();
    expect(main[name]).toBe(http[name]);
  });

  it('format, parse and assertNodeFits are the renamed functions', () => {
    expect(main.format).toBe(formatId);
    expect(main.parse).toBe(parseIdText);
    expect(main.assertNodeFits).toBe(checkNodeFitsLayout);
    expect(main.formatId(42n, base62Form())).toBe(formatId(42n, base62Form()));
    expect(main.parseIdText('00042')).toBe(42n);
    expect(() => main.checkNodeFitsLayout(resolveLayout('default'), 0, 10_000)).toThrow(/workerId|worker bits/);
  });

  it('SNOWFLAKE_GENERATOR is still the module’s token, so old injections resolve', () => {
    expect(main.SNOWFLAKE_GENERATOR).toBe(SNOWFLAKE_GENERATOR);
  });
});

describe('nestjs-snowflake/http', () => {
  it('exports the request and response helpers and nothing else', () => {
    expect(Object.keys(http).sort()).toEqual([
      'BigIntSerializerInterceptor',
      'ParseSnowflakeIdPipe',
      'SnowflakeExceptionFilter',
      'SnowflakeIdBody',
      'SnowflakeIdParam',
      'SnowflakeIdQuery',
      'bigintsToStrings',
      'snowflakeJsonReplacer',
    ]);
  });
});

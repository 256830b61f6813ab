import { lastValueFrom, of } from 'rxjs';
import type { CallHandler, ExecutionContext } from '@nestjs/common';
import { bigintsToStrings, snowflakeJsonReplacer } from '../../lib/json/bigint-json.js';
import { BigIntSerializerInterceptor } from '../../lib/json/bigint-serializer.interceptor.js';

const BIG = 2n ** 62n + 12345n;

describe('snowflakeJsonReplacer', () => {
  it('writes bigints as exact decimal strings and leaves everything else alone', () => {
    const value = { id: BIG, n: 1, s: 'x', list: [BIG, null], at: new Date(0), nested: { id: 0n } };
    expect(JSON.parse(JSON.stringify(value, snowflakeJsonReplacer))).toEqual({
      id: BIG.toString(),
      n: 1,
      s: 'x',
      list: [BIG.toString(), null],
      at: '1970-01-01T00:00:00.000Z',
      nested: { id: '0' },
    });
    expect(() => JSON.stringify(value)).toThrow(/BigInt/);
  });
});

describe('bigintsToStrings', () => {
  it('converts bigints at any depth without touching the input', () => {
    const input = { id: BIG, items: [{ id: 1n, tags: ['a'] }], meta: { count: 2 } };
    const output = bigintsToStrings(input);
    expect(output).toEqual({ id: BIG.toString(), items: [{ id: '1', tags: ['a'] }], meta: { count: 2 } });
    expect(input.id).toBe(BIG);
    expect(input.items[0].id).toBe(1n);
    // Branches without bigints are shared, not copied.
    expect(output.meta).toBe(input.meta);
    expect(bigintsToStrings(BIG)).toBe(BIG.toString());
    expect(bigintsToStrings([BIG])).toEqual([BIG.toString()]);
  });

  it('returns values without bigints as they are', () => {
    const value = { a: 1, b: [1, 'x'], c: null, d: undefined };
    expect(bigintsToStrings(value)).toBe(value);
    expect(bigintsToStrings(null)).toBeNull();
    expect(bigintsToStrings('7')).toBe('7');
  });

  it('leaves objects with toJSON to their own serialization', () => {
    const date = new Date(0);
    expect(bigintsToStrings({ date }).date).toBe(date);
  });

  it('converts an object that appears twice in the response both times', () => {
    const customer = { id: BIG, name: 'c' };
    const body = { buyer: customer, payer: customer, history: [customer] };
    const output = bigintsToStrings(body);
    expect(JSON.parse(JSON.stringify(output))).toEqual({
      buyer: { id: BIG.toString(), name: 'c' },
      payer: { id: BIG.toString(), name: 'c' },
      history: [{ id: BIG.toString(), name: 'c' }],
    });
  });

  it('terminates on cyclic objects', () => {
    const node: { id: bigint; self?: unknown } = { id: 1n };
    node.self = node;
    const output = bigintsToStrings(node) as { id: unknown };
    expect(output.id).toBe('1');
  });
});

describe('BigIntSerializerInterceptor', () => {
  it('maps the handler result through bigintsToStrings', async () => {
    const handler: CallHandler = { handle: () => of({ id: BIG, list: [1n] }) };
    const result = await lastValueFrom(new BigIntSerializerInterceptor().intercept({} as ExecutionContext, handler));
    expect(result).toEqual({ id: BIG.toString(), list: ['1'] });
  });
});

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

  it('writes boxed bigints, 64-bit integer arrays and toJSON() bigints as strings', () => {
    const value = {
      boxed: Object(BIG) as unknown,
      signed: BigInt64Array.of(-1n, 2n),
      unsigned: BigUint64Array.of(2n ** 64n - 1n),
      money: { toJSON: () => ({ cents: 5n }) },
      lookup: new Map([['a', 1n]]),
      tags: new Set([1n]),
    };
    expect(JSON.parse(JSON.stringify(value, snowflakeJsonReplacer))).toEqual({
      boxed: BIG.toString(),
      signed: ['-1', '2'],
      unsigned: [(2n ** 64n - 1n).toString()],
      money: { cents: '5' },
      lookup: {},
      tags: {},
    });
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

  it('leaves objects whose toJSON() returns no bigint to their own serialization', () => {
    const date = new Date(0);
    const buffer = Buffer.from([1, 2]);
    const output = bigintsToStrings({ date, buffer, id: 1n });
    expect(output.date).toBe(date);
    expect(output.buffer).toBe(buffer);
    expect(JSON.stringify(output)).toBe(
      '{"date":"1970-01-01T00:00:00.000Z","buffer":{"type":"Buffer","data":[1,2]},"id":"1"}',
    );
  });

  it('converts the bigints that toJSON() returns, calling it with the key as JSON.stringify does', () => {
    const keys: string[] = [];
    const money = {
      toJSON(key: string) {
        keys.push(key);
        return { cents: 250n, currency: 'EUR' };
      },
    };
    const output = bigintsToStrings({ price: money, list: [{ toJSON: () => BIG }] });
    expect(JSON.parse(JSON.stringify(output))).toEqual({
      price: { cents: '250', currency: 'EUR' },
      list: [BIG.toString()],
    });
    expect(keys[0]).toBe('price');
    // JSON.stringify writes the own properties of an object whose toJSON() returns the object itself.
    const self = {
      id: 1n,
      toJSON() {
        return this;
      },
    };
    expect(JSON.stringify(bigintsToStrings(self))).toBe('{"id":"1"}');
  });

  it('keeps the prototype of the objects it copies, so class instances stay instances', () => {
    class User {
      constructor(
        readonly id: bigint,
        readonly password: string,
      ) {}
      get label() {
        return `user ${this.id}`;
      }
    }
    const user = new User(BIG, 'secret');
    const output = bigintsToStrings({ user }).user;
    // ClassSerializerInterceptor (class-transformer) reads @Exclude() from the prototype's class: a plain copy would
    // lose it and leak the password.
    expect(output).toBeInstanceOf(User);
    expect(output).not.toBe(user);
    expect({ ...output }).toEqual({ id: BIG.toString(), password: 'secret' });
    expect(output.label).toBe(`user ${BIG}`);
    expect(user.id).toBe(BIG);

    const withoutBigint = new User(undefined as unknown as bigint, 'x');
    expect(bigintsToStrings(withoutBigint)).toBe(withoutBigint);
    const bare = Object.assign(Object.create(null) as object, { id: 1n });
    expect(Object.getPrototypeOf(bigintsToStrings(bare))).toBeNull();
    expect(bigintsToStrings(Object.freeze({ id: 1n }))).toEqual({ id: '1' });
  });

  it('writes 64-bit integer arrays as arrays of decimal strings', () => {
    const output = bigintsToStrings({
      signed: BigInt64Array.of(-(2n ** 63n), BIG),
      unsigned: BigUint64Array.of(2n ** 64n - 1n),
    });
    expect(output).toEqual({
      signed: [(-(2n ** 63n)).toString(), BIG.toString()],
      unsigned: [(2n ** 64n - 1n).toString()],
    });
    const bytes = Uint8Array.of(1);
    expect(bigintsToStrings({ bytes }).bytes).toBe(bytes);
  });

  it('writes a boxed bigint as its decimal string', () => {
    expect(bigintsToStrings(Object(BIG))).toBe(BIG.toString());
    expect(JSON.stringify(bigintsToStrings({ id: Object(1n) as unknown }))).toBe('{"id":"1"}');
  });

  it('leaves Maps and Sets, which JSON writes as {}, without throwing', () => {
    const body = { lookup: new Map([['a', 1n]]), tags: new Set([1n]) };
    expect(JSON.stringify(bigintsToStrings(body))).toBe('{"lookup":{},"tags":{}}');
  });

  it('keeps a `__proto__` key of a parsed body as a key, as JSON.stringify writes it, never as the prototype', () => {
    const reply = { ...JSON.parse('{"__proto__": {"role": "admin"}, "note": "x"}'), id: 5n };
    const converted = bigintsToStrings(reply) as Record<string, unknown>;
    expect(JSON.stringify(converted)).toBe('{"__proto__":{"role":"admin"},"note":"x","id":"5"}');
    expect(Object.getPrototypeOf(converted)).toBe(Object.prototype);
    expect(converted.role).toBeUndefined();
    // The key itself holding a bigint is converted in place, as a key.
    const nested = JSON.parse('{"__proto__": {"ownerId": 1}}') as Record<string, Record<string, unknown>>;
    nested['__proto__'].ownerId = 7n;
    expect(JSON.stringify(bigintsToStrings(nested))).toBe('{"__proto__":{"ownerId":"7"}}');
    expect(JSON.stringify(bigintsToStrings(nested))).toBe(JSON.stringify(nested, snowflakeJsonReplacer));
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
    // A toJSON() that hands back a structure containing its own object is met once.
    const entity: { id: bigint; toJSON(): unknown } = { id: 2n, toJSON: () => json };
    const json = { entity, id: 3n };
    expect((bigintsToStrings(entity) as { id: unknown }).id).toBe('3');
  });
});

describe('BigIntSerializerInterceptor', () => {
  it('maps the handler result through bigintsToStrings', async () => {
    const handler: CallHandler = { handle: () => of({ id: BIG, list: [1n] }) };
    const result = await lastValueFrom(new BigIntSerializerInterceptor().intercept({} as ExecutionContext, handler));
    expect(result).toEqual({ id: BIG.toString(), list: ['1'] });
    expect('toJSON' in BigInt.prototype).toBe(false);
  });
});

import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { GraphQLError, parseValue, type ValueNode } from 'graphql';
import { InvalidSnowflakeError, SnowflakeConfigError } from '../../lib/core/errors.js';
import type { SnowflakeIdForm } from '../../lib/core/id-form.js';
import { resolveLayout } from '../../lib/core/layout.js';
import { InvalidPublicIdError } from '../../lib/forms/form.errors.js';
import { publicIdForm } from '../../lib/forms/public-id.form.js';
import { base32Form } from '../../lib/forms/radix.form.js';
import { SnowflakeGraphQLModule } from '../../lib/graphql/snowflake-graphql.module.js';
import { createSnowflakeScalar } from '../../lib/graphql/snowflake-scalar.type.js';
import { SnowflakeScalar } from '../../lib/graphql/snowflake.scalar.js';
import { SnowflakeModule } from '../../lib/module/snowflake.module.js';

const twitter = resolveLayout({ preset: 'twitter' });
const jsSafe = resolveLayout({ preset: 'js-safe' });
const big = 1_541_815_603_606_036_480n; // above 2^53
const literal = (source: string): ValueNode => parseValue(source);

/** Runs `fn` and returns what it threw. */
function thrown(fn: () => unknown): Error {
  try {
    fn();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a throw');
}

describe('createSnowflakeScalar: the conversions', () => {
  const scalar = createSnowflakeScalar(twitter);

  it('is named Snowflake and describes how IDs are written', () => {
    expect(scalar.name).toBe('Snowflake');
    expect(scalar.description).toContain('decimal string');
  });

  it('serialises bigints, boxed bigints, decimal strings and safe integers to the decimal string', () => {
    expect(scalar.serialize(big)).toBe('1541815603606036480');
    expect(scalar.serialize(Object(big))).toBe('1541815603606036480');
    expect(scalar.serialize('1541815603606036480')).toBe('1541815603606036480');
    expect(scalar.serialize(42)).toBe('42');
  });

  it.each([
    ['a negative bigint', -1n, 'IDs are never negative'],
    ['a rounded number', 2 ** 60, 'beyond 2^53'],
    ['an object', { id: 1 }, 'expected a bigint, a decimal string or a number'],
  ])('refuses to serialise %s with a GraphQL error for the server, not the client', (_what, value, reason) => {
    const error = thrown(() => scalar.serialize(value));
    expect(error).toBeInstanceOf(GraphQLError);
    expect(error.message).toMatch(/^Snowflake cannot represent the value a resolver returned: /);
    expect(error.message).toContain(reason);
    expect((error as GraphQLError).extensions.code).toBe('INTERNAL_SERVER_ERROR');
    expect((error as GraphQLError).originalError).toBeUndefined();
  });

  it('parses strings and safe integers, from variables and from literals, into bigints', () => {
    expect(scalar.parseValue('1541815603606036480')).toBe(big);
    expect(scalar.parseValue(42)).toBe(42n);
    expect(scalar.parseLiteral(literal('"1541815603606036480"'))).toBe(big);
    expect(scalar.parseLiteral(literal('42'))).toBe(42n);
  });

  it.each([
    ['letters', () => scalar.parseValue('12ab'), 'digits only'],
    ['a negative literal', () => scalar.parseLiteral(literal('-3')), 'IDs are never negative'],
    [
      'a float literal',
      () => scalar.parseLiteral(literal('1.5')),
      'expected a decimal string or a safe integer, got float value',
    ],
    ['a list literal', () => scalar.parseLiteral(literal('["1"]')), 'got list'],
    ['null', () => scalar.parseValue(null), 'got null'],
    ['an integer literal beyond 2^53', () => scalar.parseLiteral(literal('1541815603606036480')), 'beyond 2^53'],
    ['an ID wider than the layout', () => scalar.parseValue((1n << 63n).toString()), "wider than the layout's 63 bits"],
  ])(
    'refuses %s with InvalidSnowflakeError, which graphql-js turns into a validation error',
    (_what, parse, reason) => {
      const error = thrown(parse);
      expect(error).toBeInstanceOf(InvalidSnowflakeError);
      expect(error.message).toContain(reason);
    },
  );

  it('names an integer literal beyond 2^53 as written, not as the double it rounds to', () => {
    expect(thrown(() => scalar.parseLiteral(literal('9007199254740993'))).message).toMatch(
      /^Invalid snowflake ID "9007199254740993": an int value beyond 2\^53 is refused.*write the ID as a string/,
    );
    const huge = thrown(() => scalar.parseLiteral(literal('9'.repeat(400)))).message;
    expect(huge).not.toContain('Infinity');
    expect(huge).toMatch(/^Invalid snowflake ID "9{10,}.*beyond 2\^53/);
  });

  it("checks against the layout it was given: js-safe's 53 bits", () => {
    const safe = createSnowflakeScalar(jsSafe);
    expect(thrown(() => safe.parseValue(big.toString())).message).toContain("wider than the layout's 53 bits");
    expect(safe.parseValue('12345')).toBe(12345n);
  });
});

describe('createSnowflakeScalar with a form', () => {
  const hex: SnowflakeIdForm = {
    name: 'hex',
    format: (id) => id.toString(16),
    parse: (text) => {
      if (!/^[0-9a-f]+$/.test(text)) throw new InvalidSnowflakeError(text, 'expected hexadecimal digits.');
      return BigInt(`0x${text}`);
    },
  };
  const scalar = createSnowflakeScalar(twitter, { form: hex });

  it('writes and reads the form, and checks the layout after the form has read the text', () => {
    expect(scalar.serialize(big)).toBe(big.toString(16));
    expect(scalar.parseValue(big.toString(16))).toBe(big);
    expect(scalar.parseLiteral(literal(`"${big.toString(16)}"`))).toBe(big);
    expect(thrown(() => scalar.parseValue('8000000000000000')).message).toContain("wider than the layout's 63 bits");
    expect(thrown(() => scalar.parseValue('xyz')).message).toContain('expected hexadecimal digits');
    expect(scalar.description).toContain('in the hex form');
  });

  it('refuses numbers, which are no text of the form', () => {
    expect(thrown(() => scalar.parseValue(12)).message).toContain('expected a string in the hex form, got number');
    expect(thrown(() => scalar.parseLiteral(literal('12'))).message).toContain('in the hex form, got an int value');
  });
});

describe("createSnowflakeScalar with the library's forms", () => {
  it('writes and reads base32 with a prefix, and public IDs, refusing forged ones with InvalidPublicIdError', () => {
    const base32 = createSnowflakeScalar(twitter, { form: base32Form({ prefix: 'user' }) });
    expect(base32.serialize(big)).toBe(`user_${base32Form().format(big)}`);
    expect(base32.parseLiteral(literal(`"${base32.serialize(big)}"`))).toBe(big);
    expect(thrown(() => base32.parseValue('user_01o0000000000')).message).toContain('"o" at position 7');

    const publicIds = publicIdForm({ keys: ['graphql-test-key-0123456789abcdef'], layout: twitter });
    const opaque = createSnowflakeScalar(twitter, { form: publicIds });
    const text = opaque.serialize(big);
    expect(text).toHaveLength(publicIds.length);
    expect(opaque.parseValue(text)).toBe(big);
    const otherTag = text[0] === 'z' ? 'y' : 'z';
    expect(thrown(() => opaque.parseValue(`${otherTag}${text.slice(1)}`))).toBeInstanceOf(InvalidPublicIdError);
  });
});

describe('options', () => {
  it.each([
    [{ from: {} }, 'from', 'did you mean `form`?'],
    [{ form: { name: 'hex', format: () => '' } }, 'form', 'expected a SnowflakeIdForm'],
    [{ form: null }, 'form', 'leave it out for decimal strings'],
  ])('createSnowflakeScalar(%j) fails naming the option', (options, option, message) => {
    const error = thrown(() => createSnowflakeScalar(twitter, options as never));
    expect(error).toBeInstanceOf(SnowflakeConfigError);
    expect(error).toMatchObject({ option });
    expect(error.message).toContain(message);
  });

  it('SnowflakeGraphQLModule.forRoot() with a misspelt option fails at bootstrap, naming it', async () => {
    @Module({
      imports: [SnowflakeModule.forRoot({ workerId: 2 }), SnowflakeGraphQLModule.forRoot({ fomr: undefined } as never)],
    })
    class AppModule {}
    await expect(Test.createTestingModule({ imports: [AppModule] }).compile()).rejects.toThrow(
      /Invalid snowflake option `fomr`: SnowflakeGraphQLModule has no option "fomr"; did you mean `form`\?/,
    );
  });

  it('the scalar without SnowflakeModule in the app fails at bootstrap, saying what to import', async () => {
    @Module({ imports: [SnowflakeGraphQLModule] })
    class AppModule {}
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    await expect(moduleRef.init()).rejects.toThrow(
      /found no IdService in the application: import SnowflakeModule.forRoot\(\)/,
    );
  });

  it('finds the layout of a SnowflakeModule that is not global', async () => {
    @Module({ imports: [SnowflakeModule.forRoot({ workerId: 3, layout: { preset: 'js-safe' } })] })
    class IdsModule {}
    @Module({ imports: [IdsModule, SnowflakeGraphQLModule] })
    class AppModule {}
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    await moduleRef.init();
    try {
      const scalar = moduleRef.get(SnowflakeScalar);
      expect(thrown(() => scalar.parseValue(big.toString())).message).toContain("wider than the layout's 53 bits");
      expect(scalar.parseValue('7')).toBe(7n);
    } finally {
      await moduleRef.close();
    }
  });
});

describe('createSnowflakeScalar with a name', () => {
  it('names the type in the schema and in its errors, for a second ID space', () => {
    const orderId = createSnowflakeScalar(jsSafe, { name: 'OrderId' });
    expect(orderId.name).toBe('OrderId');
    expect(orderId.parseValue('42')).toBe(42n);
    expect(() => orderId.parseValue(big.toString())).toThrow(/wider than the layout's 53 bits/);
    expect(thrown(() => orderId.serialize(big)).message).toMatch(/^OrderId cannot represent the value/);
  });

  it('refuses a name GraphQL does not allow, and the generator option it has no use for', () => {
    expect(() => createSnowflakeScalar(twitter, { name: 'Order-Id' })).toThrow(/`name`.*GraphQL type name/);
    expect(() => createSnowflakeScalar(twitter, { generator: 'orders' } as never)).toThrow(
      /createSnowflakeScalar\(\) has no option "generator"/,
    );
  });
});

/**
 * Hostile input at the readers of IDs: one reading of a raw ID, typed errors only, and messages that name the input
 * without repeating it, whatever its type.
 */
import { Kind, parseValue, type ValueNode } from 'graphql';
import { SnowflakeCodec, parseId } from '../../lib/core/codec.js';
import { InvalidSnowflakeError } from '../../lib/core/errors.js';
import { resolveLayout } from '../../lib/core/layout.js';
import { InvalidSnowflakeTextError } from '../../lib/forms/form.errors.js';
import { publicIdForm } from '../../lib/forms/public-id.form.js';
import { base32Form, base62Form, decimalForm } from '../../lib/forms/radix.form.js';
import { createSnowflakeScalar } from '../../lib/graphql/snowflake-scalar.type.js';

const layout = resolveLayout('default');
const codec = new SnowflakeCodec(layout);
const MAX_MESSAGE = 400;

function thrown(call: () => unknown): Error {
  try {
    call();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a throw');
}

const revoked = (() => {
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  return proxy;
})();

describe('one reading of a raw ID', () => {
  it('refuses -0 as a number, as "-0" is refused as text', () => {
    expect(thrown(() => codec.decode(-0))).toBeInstanceOf(InvalidSnowflakeError);
    expect(thrown(() => codec.decode('-0'))).toBeInstanceOf(InvalidSnowflakeError);
    expect(codec.decode(0).id).toBe(0n);
  });

  it('reads leading zeros in text of any length', () => {
    expect(parseId(`${'0'.repeat(100_000)}42`, layout)).toBe(42n);
  });
});

describe('messages name the input without repeating it', () => {
  it.each<[string, unknown]>([
    ['a 10 MB string', 'x'.repeat(10_000_000)],
    ['a million-element array', Array.from({ length: 1_000_000 }, () => 1)],
    ['a bigint of 100,000 digits', -(10n ** 100_000n)],
    ['an object with a long toString', { toString: () => 'y'.repeat(1_000_000) }],
    [
      'an object whose toString throws',
      {
        toString: () => {
          throw new TypeError('no');
        },
      },
    ],
    ['a null-prototype object', Object.create(null)],
    ['a revoked Proxy', revoked],
    ['a symbol with a long description', Symbol('z'.repeat(100_000))],
  ])('%s', (_, input) => {
    const error = thrown(() => codec.decode(input as string));
    expect(error).toBeInstanceOf(InvalidSnowflakeError);
    expect(error.message.length).toBeLessThan(MAX_MESSAGE);
  });
});

describe('form.parse() on a value that is not a string', () => {
  const forms = [
    decimalForm(),
    base32Form(),
    base62Form({ prefix: 'user' }),
    publicIdForm({ keys: ['hostile-input-key-0123456789'], layout }),
  ];
  it.each<[string, unknown]>([
    ['a null-prototype object', Object.create(null)],
    [
      'an object whose toString throws',
      {
        toString: () => {
          throw new TypeError('no');
        },
      },
    ],
    ['an object whose toString is a valid text', { toString: () => '1' }],
    ['a number', 1],
    ['a revoked Proxy', revoked],
    ['a million-element array', Array.from({ length: 1_000_000 }, () => 1)],
  ])('refuses %s with InvalidSnowflakeTextError, without calling toString', (_, input) => {
    for (const form of forms) {
      const error = thrown(() => form.parse(input as string));
      expect(error).toBeInstanceOf(InvalidSnowflakeTextError);
      expect(error.message.length).toBeLessThan(MAX_MESSAGE);
    }
  });
});

describe('the GraphQL scalar', () => {
  const scalar = createSnowflakeScalar(layout);

  it('names a list literal by its kind, without printing it', () => {
    const node: ValueNode = {
      kind: Kind.LIST,
      values: Array.from({ length: 200_000 }, () => ({ kind: Kind.INT, value: '12345' })),
    };
    const started = performance.now();
    const error = thrown(() => scalar.parseLiteral(node));
    expect(performance.now() - started).toBeLessThan(50);
    expect(error).toBeInstanceOf(InvalidSnowflakeError);
    expect(error.message).toContain('list value');
    expect(error.message.length).toBeLessThan(MAX_MESSAGE);
  });

  it('cuts a long float literal', () => {
    const error = thrown(() => scalar.parseLiteral(parseValue(`1.${'5'.repeat(100_000)}`)));
    expect(error).toBeInstanceOf(InvalidSnowflakeError);
    expect(error.message.length).toBeLessThan(MAX_MESSAGE);
  });

  it('refuses -0 as a literal and as a variable', () => {
    expect(thrown(() => scalar.parseLiteral(parseValue('-0')))).toBeInstanceOf(InvalidSnowflakeError);
    expect(thrown(() => scalar.parseValue(-0))).toBeInstanceOf(InvalidSnowflakeError);
  });
});

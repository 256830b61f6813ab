import fc from 'fast-check';
import { InvalidSnowflakeError, SnowflakeConfigError } from '../../lib/core/errors.js';
import { LAYOUT_PRESETS, resolveLayout } from '../../lib/core/layout.js';
import { InvalidSnowflakeTextError } from '../../lib/forms/form.errors.js';
import { formatId, parseIdText } from '../../lib/forms/format.js';
import { base32Form, base62Form, decimalForm } from '../../lib/forms/radix.form.js';

const BASE32_DIGITS = '0123456789abcdefghjkmnpqrstvwxyz';
const BASE62_DIGITS = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** A width in bits with an ID of that width, biased towards 0, the largest ID and all-ones runs. */
const bitsAndIdArb = fc
  .integer({ min: 1, max: 63 })
  .chain((bits) => fc.tuple(fc.constant(bits), fc.bigInt({ min: 0n, max: (1n << BigInt(bits)) - 1n })));
const prefixArb = fc.option(fc.stringMatching(/^[a-z][a-z0-9_]{0,10}[a-z0-9]$/), { nil: undefined });
const forms = { base32: base32Form, base62: base62Form } as const;

/** The error a call throws, for assertions on its fields. */
function caught(call: () => unknown): InvalidSnowflakeTextError {
  try {
    call();
  } catch (error) {
    if (error instanceof InvalidSnowflakeTextError) return error;
    throw error;
  }
  throw new Error('expected an InvalidSnowflakeTextError, but the call returned');
}

describe.each(Object.keys(forms) as (keyof typeof forms)[])('%s form', (name) => {
  const make = forms[name];

  it('round-trips every ID of every width, with and without a prefix, at a fixed width', () => {
    fc.assert(
      fc.property(bitsAndIdArb, prefixArb, ([bits, id], prefix) => {
        const form = make({ bits, prefix });
        const text = form.format(id);
        expect(form.parse(text)).toBe(id);
        expect(text).toHaveLength(form.format(0n).length);
        expect(text.startsWith(prefix === undefined ? '' : `${prefix}_`)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it("round-trips the whole range of each preset's layout, its ends included", () => {
    for (const preset of Object.keys(LAYOUT_PRESETS) as (keyof typeof LAYOUT_PRESETS)[]) {
      const layout = resolveLayout(preset);
      const form = make({ bits: layout.totalBits });
      fc.assert(
        fc.property(fc.bigInt({ min: 0n, max: layout.maxId }), (id) => form.parse(form.format(id)) === id),
        { examples: [[0n], [layout.maxId], [layout.maxId - 1n], [1n]] },
      );
    }
  });

  it('keeps the order of IDs in the byte-wise order of their texts', () => {
    fc.assert(
      fc.property(bitsAndIdArb, fc.bigInt({ min: 0n, max: (1n << 63n) - 1n }), ([bits, a], wide) => {
        const form = make({ bits, prefix: 'ord' });
        const b = wide & ((1n << BigInt(bits)) - 1n);
        const [ta, tb] = [form.format(a), form.format(b)];
        expect(Math.sign(ta < tb ? -1 : ta > tb ? 1 : 0)).toBe(a < b ? -1 : a > b ? 1 : 0);
      }),
      { numRuns: 2000 },
    );
    const form = make();
    const ids = fc.sample(fc.bigInt({ min: 0n, max: (1n << 63n) - 1n }), 500);
    const byText = ids.map((id) => form.format(id)).sort();
    const byValue = [...ids].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).map((id) => form.format(id));
    expect(byText).toEqual(byValue);
  });

  it('refuses a character outside the alphabet, naming its position and the character', () => {
    const digits = name === 'base32' ? BASE32_DIGITS : BASE62_DIGITS;
    const foreign = fc
      .string({ minLength: 1, maxLength: 1, unit: 'grapheme' })
      .filter((c) => !digits.includes(name === 'base32' ? c.toLowerCase() : c) && c.length === 1);
    fc.assert(
      fc.property(bitsAndIdArb, prefixArb, foreign, fc.nat(), ([bits, id], prefix, bad, at) => {
        const form = make({ bits, prefix });
        const text = form.format(id);
        const head = prefix === undefined ? 0 : prefix.length + 1;
        const position = head + (at % (text.length - head));
        const broken = text.slice(0, position) + bad + text.slice(position + 1);
        const error = caught(() => form.parse(broken));
        expect(error).toBeInstanceOf(InvalidSnowflakeError);
        expect({ position: error.position, character: error.character, form: error.form }).toEqual({
          position,
          character: bad,
          form: name,
        });
        expect(error.message).toContain(`${JSON.stringify(bad)} at position ${position}`);
      }),
      { numRuns: 1000 },
    );
  });

  it('refuses a value wider than its bits at the first digit that exceeds the largest', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 62 }), fc.nat(), (bits, seed) => {
        const form = make({ bits });
        const max = form.format((1n << BigInt(bits)) - 1n);
        const digits = name === 'base32' ? BASE32_DIGITS : BASE62_DIGITS;
        // Raise one digit of the largest text that can be raised: the value then exceeds the bits there.
        const raisable = [...max].flatMap((c, i) => (digits.indexOf(c) < digits.length - 1 ? [i] : []));
        // Bits that fill their characters exactly (5, 10, … in base32) leave no wider value to write.
        fc.pre(raisable.length > 0);
        const position = raisable[seed % raisable.length];
        const above = max.slice(0, position) + digits[digits.indexOf(max[position]) + 1] + max.slice(position + 1);
        const error = caught(() => form.parse(above));
        expect(error.position).toBe(position);
        expect(error.message).toContain(`exceed ${bits} bits`);
      }),
    );
  });

  it('refuses the wrong length, and a missing or foreign prefix at the first character that differs', () => {
    const form = make({ prefix: 'user' });
    const text = form.format(123456789n);
    expect(caught(() => form.parse(text.slice(0, -1))).message).toMatch(/expected \d+ characters after "user_"/);
    expect(caught(() => form.parse(`${text}0`)).position).toBe(text.length);
    expect(caught(() => form.parse(text.replace('user_', 'usr_')))).toMatchObject({ position: 2, character: 'r' });
    expect(caught(() => form.parse(text.slice(5)))).toMatchObject({ position: 0 });
    expect(caught(() => form.parse('use')).message).toContain('the text ends at position 3');
    expect(() => form.parse(123 as unknown as string)).toThrow(InvalidSnowflakeTextError);
  });

  it('writes only bigints that fit its bits', () => {
    const form = make({ bits: 10 });
    expect(() => form.format(1024n)).toThrow(/writes IDs from 0 to 1023 \(10 bits\)/);
    expect(() => form.format(-1n)).toThrow(InvalidSnowflakeError);
    expect(() => form.format(5 as unknown as bigint)).toThrow(/writes bigint IDs, got number/);
  });
});

describe('base32 form', () => {
  it('writes 13 lower-case characters for 63 bits and 11 for js-safe, reads either case', () => {
    const form = base32Form();
    expect(form.format(2125018075706167296n)).toBe('1tzcmnsbw0400');
    expect(form.format((1n << 63n) - 1n)).toBe('7zzzzzzzzzzzz');
    expect(form.parse('1TZCMNSBW0400')).toBe(2125018075706167296n);
    expect(base32Form({ bits: resolveLayout('js-safe').totalBits }).format(0n)).toBe('00000000000');
  });

  it('refuses the letters Crockford leaves out, naming the digit a reader likely meant', () => {
    const form = base32Form();
    for (const [letter, meant] of [
      ['O', '0'],
      ['i', '1'],
      ['L', '1'],
      ['u', 'v'],
    ]) {
      const error = caught(() => form.parse(`1tzcmnsbw04${letter}0`));
      expect(error).toMatchObject({ position: 11, character: letter });
      expect(error.message).toContain(`did you mean ${meant}?`);
    }
  });
});

describe('base62 form', () => {
  it('writes 11 characters for 63 bits, and case matters', () => {
    const form = base62Form();
    expect(form.format((1n << 63n) - 1n)).toBe('AzL8n0Y58m7');
    expect(form.parse('0000000000a')).toBe(36n);
    expect(form.parse('0000000000A')).toBe(10n);
  });
});

describe('decimal form and the free functions', () => {
  it('reads and writes decimal digits by default, leading zeros read, with the position of a bad character', () => {
    fc.assert(fc.property(fc.bigInt({ min: 0n, max: (1n << 63n) - 1n }), (id) => parseIdText(formatId(id)) === id));
    expect(formatId(42n)).toBe('42');
    expect(parseIdText('00042')).toBe(42n);
    expect(caught(() => parseIdText('12a4'))).toMatchObject({ position: 2, character: 'a' });
    expect(caught(() => parseIdText('-1'))).toMatchObject({ position: 0, character: '-' });
    expect(caught(() => parseIdText(''))).toBeInstanceOf(InvalidSnowflakeTextError);
    expect(() => parseIdText('9223372036854775808')).toThrow(/exceeds 63 bits/);
    expect(() => parseIdText('0'.repeat(30) + '7')).not.toThrow();
    expect(() => parseIdText('1'.repeat(30))).toThrow(/exceeds 63 bits/);
  });

  it('passes through any form, prefix included', () => {
    const form = decimalForm({ prefix: 'inv' });
    expect(formatId(42n, form)).toBe('inv_42');
    expect(parseIdText('inv_42', form)).toBe(42n);
    expect(parseIdText(formatId(99n, base62Form()), base62Form())).toBe(99n);
  });
});

describe('options of the text forms', () => {
  it.each([
    [{ prefix: 'User' }, 'prefix'],
    [{ prefix: 'user_' }, 'prefix'],
    [{ prefix: '' }, 'prefix'],
    [{ prefix: 'a'.repeat(64) }, 'prefix'],
    [{ bits: 0 }, 'bits'],
    [{ bits: 65 }, 'bits'],
    [{ bits: 1.5 }, 'bits'],
    [{ prefx: 'user' }, 'prefx'],
  ])('refuses %j, naming `%s`', (options, option) => {
    for (const make of [base32Form, base62Form, decimalForm]) {
      const error = (() => {
        try {
          make(options as never);
        } catch (e) {
          return e;
        }
      })();
      expect(error).toBeInstanceOf(SnowflakeConfigError);
      expect((error as SnowflakeConfigError).option).toBe(option);
    }
  });

  it('accepts prefixes as TypeID and Stripe write them', () => {
    expect(base32Form({ prefix: 'cus' }).format(1n)).toBe('cus_0000000000001');
    expect(base32Form({ prefix: 'user_account' }).parse('user_account_0000000000001')).toBe(1n);
  });
});

/**
 * The options of `@IsSnowflakeId()` and `@ToSnowflakeId()` are checked where a DTO is declared: a `form` that is no
 * SnowflakeIdForm, a malformed `generator` or a non-boolean `each` fail there, naming the option, instead of as a
 * TypeError (500) on the first request.
 */
import 'reflect-metadata';
import { SnowflakeConfigError } from '../../lib/core/errors.js';
import { IsSnowflakeId, ToSnowflakeId } from '../../lib/validation.js';

describe('validation decorator options', () => {
  it('refuse a form that is no SnowflakeIdForm', () => {
    expect(() => ToSnowflakeId({ form: 'base36' as never })).toThrow(SnowflakeConfigError);
    expect(() => ToSnowflakeId({ form: 'base36' as never })).toThrow(
      /`form`: @ToSnowflakeId\(\) expected a SnowflakeIdForm, an object with `name`, `format\(id\)` and `parse\(text\)`/,
    );
    expect(() => IsSnowflakeId({ form: { name: 'base36', format: String } as never })).toThrow(
      /`form`: @IsSnowflakeId\(\) expected a SnowflakeIdForm/,
    );
  });

  it('refuse a generator that is no registration name', () => {
    expect(() => IsSnowflakeId({ generator: 7 as never })).toThrow(/`generator`: @IsSnowflakeId\(\) expected the name/);
  });

  it('refuse an `each` of @ToSnowflakeId() that is not a boolean', () => {
    expect(() => ToSnowflakeId({ each: 'yes' as never })).toThrow(/`each`: @ToSnowflakeId\(\) expected true or false/);
  });

  it('take well-formed options', () => {
    const base36 = { name: 'base36', format: (id: bigint) => id.toString(36), parse: (text: string) => BigInt(text) };
    expect(() => IsSnowflakeId({ form: base36, generator: 'orders', each: true })).not.toThrow();
    expect(() => ToSnowflakeId({ form: base36, each: true, to: 'string' })).not.toThrow();
  });
});

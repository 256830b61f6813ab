/**
 * What the app hands an ID column on the way to the database (a value it set, a where clause's value), through every
 * ORM adapter: an ID is written exactly, and anything that is not one is refused with `InvalidSnowflakeError`, never
 * written as another ID. A JSON body's ID above 2^53 reaches the app rounded (`JSON.parse`); a bare `BigInt()` read
 * `''` as 0, `' 42 '` and `'0x2a'` as 42 and `true` as 1.
 */
import { mysqlTable } from 'drizzle-orm/mysql-core';
import { pgTable } from 'drizzle-orm/pg-core';
import { sqliteTable } from 'drizzle-orm/sqlite-core';
import { InvalidSnowflakeError } from '../../lib/core/errors.js';
import { mysqlSnowflakeId, pgSnowflakeId, sqliteSnowflakeId } from '../../lib/drizzle.js';
import { SnowflakeIdType } from '../../lib/mikro-orm.js';
import { snowflakeIdAttribute } from '../../lib/sequelize.js';
import { generatedIdTransformer } from '../../lib/orm/typeorm/generated-id.transformer.js';

const ids = { next: () => 1n };
const JSON_ROUNDED = JSON.parse('1152921504606846977') as number;
const NOT_IDS: [string, unknown][] = [
  ['a number beyond 2^53 (a JSON body rounded it)', JSON_ROUNDED],
  ['an empty string', ''],
  ['digits with spaces', ' 42 '],
  ['a hexadecimal literal', '0x2a'],
  ['an exponent', '1e3'],
  ['a boolean', true],
  ['a negative number', -1],
  // Found by a review: SQLite stored it as a REAL (rounded), and every read of the table failed from then on.
  ['a text beyond 2^63 - 1 (no layout issues it, a signed BIGINT cannot hold it)', '9223372036854775808'],
  ['a bigint beyond 2^63 - 1', 2n ** 64n - 1n],
];

type Write = (value: unknown) => unknown;

const sequelizeAttribute = snowflakeIdAttribute('id') as unknown as {
  type: { _stringify(value: unknown): unknown };
  set(this: { setDataValue(key: string, value: unknown): void }, value: unknown): void;
};

const WRITES: [string, Write][] = [
  ['TypeORM (@GeneratedId() transformer)', (value) => generatedIdTransformer('Item.id', 'bigint').to(value)],
  [
    'Sequelize (attribute setter)',
    (value) => {
      let stored: unknown;
      sequelizeAttribute.set.call({ setDataValue: (_key, v) => (stored = v) }, value);
      return stored;
    },
  ],
  ['Sequelize (SQL literal)', (value) => sequelizeAttribute.type._stringify(value)],
  ['MikroORM (SnowflakeIdType)', (value) => new SnowflakeIdType().convertToDatabaseValue(value)],
  ['Drizzle (pg)', (value) => pgTable('t', { id: pgSnowflakeId('id', ids) }).id.mapToDriverValue(value)],
  ['Drizzle (mysql)', (value) => mysqlTable('t', { id: mysqlSnowflakeId('id', ids) }).id.mapToDriverValue(value)],
  ['Drizzle (sqlite)', (value) => sqliteTable('t', { id: sqliteSnowflakeId('id', ids) }).id.mapToDriverValue(value)],
];

describe.each(WRITES)('IDs written through %s', (_, write) => {
  it.each(NOT_IDS)('refuses %s with InvalidSnowflakeError', (__, value) => {
    expect(() => write(value)).toThrow(InvalidSnowflakeError);
  });

  it('writes an ID exactly, as a bigint, a decimal string or a safe number', () => {
    for (const value of [1152921504606846977n, '1152921504606846977', 42]) {
      expect(BigInt(write(value) as bigint)).toBe(BigInt(value));
    }
  });
});

describe('TypeORM (@GeneratedId() transformer) on a text column', () => {
  // Found by a review: a varchar column held '007' and '7', one ID, as two rows.
  it('writes a text ID in its one decimal form', () => {
    const transformer = generatedIdTransformer('Item.id', 'string');
    expect(transformer.to('007')).toBe('7');
    expect(transformer.to('1152921504606846977')).toBe('1152921504606846977');
  });
});

import { GeneratedIdNotFilledError, IdPrecisionLossError } from './generated-id.errors.js';
import type { GeneratedIdJsType } from './generated-id.metadata.js';
import { writtenId } from '../id-column.values.js';

/** TypeORM's `ValueTransformer`, by shape. @internal */
export interface IdValueTransformer {
  to(value: unknown): unknown;
  from(value: unknown): unknown;
}

const READ_FIX =
  'Configure the driver to return exact 64-bit integers: better-sqlite3 with `driver: safeIntegerDriver(Database)` ' +
  '(or `prepareDatabase: (db) => db.defaultSafeIntegers(true)`), pg without `parseInt8`, mysql2 with ' +
  '`supportBigNumbers: true, bigNumberStrings: true`.';

/**
 * Converts what the driver returns (pg and mysql2 a decimal string, better-sqlite3 with safe integers a bigint) to
 * the property's declared JS type, and refuses a number that may already have been rounded.
 *
 * Writes pass through once checked (a rounded number, or a text that is not an ID, is refused), a text in its one
 * decimal form: pg, mysql2 and better-sqlite3 all bind strings and bigints exactly. TypeORM calls
 * `to` for every column of an INSERT, an absent value included, after the subscribers' `beforeInsert`: an absent ID
 * there means no subscriber is attached, which would otherwise end in the database's NOT NULL error.
 *
 * @internal
 */
export function generatedIdTransformer(label: string, jsType: GeneratedIdJsType): IdValueTransformer {
  const exact = (value: number): number => {
    if (!Number.isSafeInteger(value)) throw new IdPrecisionLossError(`Reading ${label}`, value, READ_FIX);
    return value;
  };
  const from =
    jsType === 'string'
      ? (value: unknown): unknown =>
          typeof value === 'bigint' ? value.toString() : typeof value === 'number' ? String(exact(value)) : value
      : jsType === 'bigint'
        ? (value: unknown): unknown =>
            typeof value === 'string' ? BigInt(value) : typeof value === 'number' ? BigInt(exact(value)) : value
        : (value: unknown): unknown =>
            typeof value === 'string' || typeof value === 'bigint'
              ? exact(Number(value))
              : typeof value === 'number'
                ? exact(value)
                : value;
  const to = (value: unknown): unknown => {
    if (value === undefined) throw new GeneratedIdNotFilledError(label);
    // What the app set, or a where clause compares with: checked, never written rounded or as another ID. A text is
    // written in its one decimal form ('007' as '7'), so that a text column never holds one ID as two values. An
    // operator object or null goes to TypeORM as it is.
    if (typeof value === 'string') return writtenId(value).toString();
    if (value !== null && typeof value !== 'object' && typeof value !== 'function') writtenId(value);
    return value;
  };
  return { to, from };
}

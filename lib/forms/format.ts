import type { SnowflakeIdForm } from '../core/id-form.js';
import { decimalForm } from './radix.form.js';

/** The default form: decimal digits of up to 63 bits, what `nextString()` writes and `decode()` reads. */
const DECIMAL_FORM = decimalForm();

/**
 * The text of an ID in `form` (decimal digits by default).
 *
 * @example
 * formatId(2125018075706167296n, base32Form()); // '1tzcmnsbw0400'
 * @throws InvalidSnowflakeError when the ID is not a bigint the form can write
 * @publicApi
 */
export function formatId(id: bigint, form: SnowflakeIdForm = DECIMAL_FORM): string {
  return form.format(id);
}

/**
 * The ID a text in `form` stands for (decimal digits by default). Whether the ID fits the app's layout is checked
 * by `IdService.decode()`, which knows it.
 *
 * @throws InvalidSnowflakeError (an `InvalidSnowflakeTextError` naming the position and the character) on malformed
 *   text; `InvalidPublicIdError` for a public ID that is forged, altered or foreign
 * @publicApi
 */
export function parseIdText(text: string, form: SnowflakeIdForm = DECIMAL_FORM): bigint {
  return form.parse(text);
}

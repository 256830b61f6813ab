import type { SnowflakeIdForm } from '../core/id-form.js';
import { IdService } from './id.service.js';

/**
 * The public-ID form of a running `SnowflakeModule` registration (its `publicIds` option), for what is written before
 * the module's options are known, keys read from configuration included: `new ParseSnowflakeIdPipe({ form:
 * appPublicIdForm() })`, a validator's or a scalar's `form`. Each call goes to the running `IdService` (the default
 * registration's, or the one named `generator`), as the pipe's instances do for the layout.
 *
 * @param generator the name of the registration, `SnowflakeModule.forRoot({ name })`. @default the default one
 * @throws SnowflakeConfigError (from `format`, `parse` and `pattern`) when no such IdService runs, or it has no
 *   `publicIds`
 * @publicApi
 */
export function appPublicIdForm(generator?: string): SnowflakeIdForm {
  return Object.freeze({
    name: 'public',
    // Read on each access, like format and parse: the pattern depends on the options (prefix, alphabet, widths).
    get pattern(): string {
      return IdService.current(generator).publicIdForm.pattern;
    },
    format: (id: bigint): string => IdService.current(generator).toPublicId(id),
    parse: (text: string): bigint => IdService.current(generator).fromPublicId(text),
  });
}

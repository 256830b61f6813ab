import type { SnowflakeIdForm } from '../core/id-form.js';
import { IdService } from './id.service.js';

/**
 * The public-ID form of the app's `SnowflakeModule` (its `publicIds` option), for what is written before the
 * module's options are known, keys read from configuration included: `new ParseSnowflakeIdPipe({ form:
 * appPublicIdForm })`, a validator's or a scalar's `form`. Each call goes to the running `IdService`, as the pipe's
 * instances do for the layout.
 *
 * @throws SnowflakeConfigError when no IdService runs, or it has no `publicIds` option
 * @publicApi
 */
export const appPublicIdForm: SnowflakeIdForm = Object.freeze({
  name: 'public',
  format: (id: bigint): string => IdService.current().toPublicId(id),
  parse: (text: string): bigint => IdService.current().fromPublicId(text),
});

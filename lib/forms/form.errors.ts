import { InvalidSnowflakeError } from '../core/errors.js';

/**
 * A text that is not an ID in the form it was read with: a character outside the form's alphabet, the wrong length,
 * a missing or foreign type prefix, or a value wider than the form's bits. `position` (counted from 0, as
 * `JSON.parse` counts) and `character` say where, when one character is to blame.
 *
 * It extends {@link InvalidSnowflakeError}, so the exception filter, the pipe and the validators answer 400 for it as
 * for any malformed ID.
 *
 * @publicApi
 */
export class InvalidSnowflakeTextError extends InvalidSnowflakeError {
  constructor(
    input: unknown,
    /** The name of the form the text was read with: `'base32'`, `'base62'`, `'decimal'`, `'public'`. */
    readonly form: string,
    reason: string,
    /** The index of the first character that is wrong, counted from 0; undefined when no single one is (length). */
    readonly position?: number,
    /** The character at `position`. */
    readonly character?: string,
  ) {
    super(input, reason);
  }
}

/**
 * A text of the right shape that is not a public ID issued with the app's keys: it was altered, made up, or issued
 * by another app (or with a key that is no longer configured). `reason` is `'key'` when no configured key has the
 * text's key tag and `'check'` when the check bits or the plausibility of the ID inside it fail; the message is the
 * same for both, so that a client learns nothing about which part of a forged value came close.
 *
 * It extends {@link InvalidSnowflakeError} (not only `SnowflakeError`) because a forged or foreign public ID is bad
 * input from a client, like a malformed ID: the exception filter and the pipe answer 400 for it, not 500.
 *
 * @publicApi
 */
export class InvalidPublicIdError extends InvalidSnowflakeError {
  constructor(
    input: string,
    /**
     * `'key'`: the key tag is not one of the configured keys'; `'check'`: the decoded value fails the checks;
     * `'ambiguous'`: two configured keys share the tag (one key's current tag is another's earlier one) and both
     * read the text as an ID, so which one wrote it cannot be told.
     */
    readonly reason: 'key' | 'check' | 'ambiguous',
  ) {
    super(
      input,
      reason === 'ambiguous'
        ? 'two of the configured keys (`publicIds.keys`) share its key tag and both read it, as different IDs: ' +
            'which one wrote it cannot be told, so neither is returned. The keys of a ring should not share a tag ' +
            'in any version (docs/forms.md, "Key rotation").'
        : 'not a public ID issued by this app: it was altered, or comes from another app or from a key that is no ' +
            'longer configured (old keys must stay in `publicIds.keys` for as long as their IDs are in circulation).',
    );
  }
}

/**
 * A text form of an ID: how an ID is written where it leaves the app (URLs, JSON, logs) and read back. The decimal
 * string is the default; other forms (a fixed-width base32, base62, a type prefix, an opaque public ID) implement the
 * same two functions, so that the parameter pipe, the validators and the GraphQL scalar accept whichever form the app
 * chooses without knowing it.
 *
 * A form only turns text into a non-negative bigint and back: whether the ID fits the app's layout is checked by the
 * caller, with the layout it has.
 *
 * @publicApi
 */
export interface SnowflakeIdForm {
  /** A short name for messages and documents: `'decimal'`, `'base32'`, `'base62'`, `'public'`, … */
  readonly name: string;
  /**
   * The source of an anchored regular expression (`^…$`) that every text the form writes and reads matches, with
   * each case it reads spelled out in the character classes (no flags): what an OpenAPI `pattern` or a client-side
   * check can use. It may match texts that `parse` still refuses (a value too large, a forged public ID); it never
   * refuses one that `parse` reads. Forms without one are documented by their name and an example.
   */
  readonly pattern?: string;
  /** The text of an ID. */
  format(id: bigint): string;
  /**
   * The ID a text stands for.
   *
   * @throws InvalidSnowflakeError naming what is wrong with the text (and where, when a character is)
   */
  parse(text: string): bigint;
}

import { base32Form } from 'nestjs-snowflake';

/**
 * How an order is referred to outside the app: its ID in base32 with a type prefix, such as `ord_1tzcmnsbw0400`.
 * Shorter than the decimal ID, read in either case, and a user's ID pasted where an order's belongs is refused for
 * its prefix rather than looked up. It is the same ID, not a secret: use the `publicIds` option for references that
 * must not reveal when an order was placed.
 */
export const orderReference = base32Form({ prefix: 'ord' });

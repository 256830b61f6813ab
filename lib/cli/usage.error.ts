/** A mistake on the command line: exit code 2, the usage printed. */
export class UsageError extends Error {}

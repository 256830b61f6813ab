/**
 * What the compiled scripts do not cover: a construct the compiler refuses, or a value the runtime does not model (a
 * table's border where it has holes, the sign of NaN). A fault of the simulator, not of the script: it is not turned
 * into a script error, so nothing runs with a guessed meaning.
 */
export class UnsupportedLua extends Error {}

/**
 * How deep a reply's tables may nest in the models. redis-server answers a table that holds itself (or one nested past
 * its Lua stack) with an error inside the arrays it had begun, which a reply here has no way to hold; the lease's
 * scripts nest two deep at most.
 */
export const MAX_REPLY_DEPTH = 32;

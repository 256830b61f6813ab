/**
 * What the compiled scripts do not cover: a construct the compiler refuses, or a value the runtime does not model (a
 * table's border where it has holes, the sign of NaN). A fault of the simulator, not of the script: it is not turned
 * into a script error, so nothing runs with a guessed meaning.
 */
export class UnsupportedLua extends Error {}

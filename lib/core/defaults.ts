/** The defaults of the generator's options, written once: the module, the lease and the generator read them here. */
export const DEFAULTS = Object.freeze({
  /** How far the clock may step back before the generator refuses (or, with a lease, switches worker ID). */
  clockBackToleranceMs: 1000,
  /** The longest a synchronous `next()` may wait for the next time unit. */
  maxSyncWaitMs: 10,
});

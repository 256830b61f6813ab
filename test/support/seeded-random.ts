/**
 * mulberry32: a small, fast 32-bit PRNG from a seed, in [0, 1). Tests and the simulator use it wherever a draw must
 * repeat on every run (the statistical tests' offsets, a lease's injected random source, the simulator's schedules).
 * The chaos run (plain Node, test/chaos/schedule.mjs) keeps its own copy of the same function.
 */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

import type { Clock } from '../../lib/core/clock.js';

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Polls `condition` until it holds, or fails naming `what` (and `details()`) after `timeoutMs`. The condition may be
 * asynchronous (a query to Redis): each poll waits for its answer before the next.
 */
export async function waitUntil(
  condition: () => boolean | Promise<boolean>,
  timeoutMs: number,
  what: string,
  details: () => string = () => '',
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}\n${details()}`);
    await sleep(100);
  }
}

/**
 * A wall clock the test can step: the clock underneath (the real one, or jest's fake time) plus an offset. Its
 * monotonic reading never steps, as a real machine's does not when NTP steps the wall clock.
 */
export class SteppableClock implements Clock {
  constructor(private offsetMs = 0) {}

  now(): number {
    return Date.now() + this.offsetMs;
  }

  monotonicNow(): number {
    return performance.now();
  }

  step(ms: number): this {
    this.offsetMs += ms;
    return this;
  }

  get stepMs(): number {
    return this.offsetMs;
  }
}

import type { Layout } from './layout.js';

/** What converting between Unix milliseconds and layout ticks needs of a layout. */
export type TimeFrame = Pick<Layout, 'epoch' | 'timeUnitMs'>;

/**
 * The tick (time units since the layout's epoch) that Unix time `ms` falls in. The one place where milliseconds
 * become ticks: names carry their unit (`…Ms`, `…Ticks`) everywhere else.
 */
export function ticksAtMs(frame: TimeFrame, ms: number): number {
  return Math.floor((ms - frame.epoch) / frame.timeUnitMs);
}

/** The Unix time at which tick `ticks` starts; -1 (none) for a negative tick, the "nothing issued yet" mark. */
export function msAtTicks(frame: TimeFrame, ticks: number): number {
  return ticks < 0 ? -1 : frame.epoch + ticks * frame.timeUnitMs;
}

/** A length of time in ticks as milliseconds. */
export function ticksToMs(frame: TimeFrame, ticks: number): number {
  return ticks * frame.timeUnitMs;
}

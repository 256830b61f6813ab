import type { SearchFigures } from './report-figures.mjs';

/** One worker's part of the search: its first seed, the step between its seeds, its share of the schedule count. */
export interface Share {
  index: number;
  seed: number;
  stride: number;
  schedules: number | undefined;
}

/** A worker once its Jest process has ended: its exit code and the summary it wrote (absent if it wrote none). */
export interface FinishedWorker {
  exitCode: number | null;
  summary: (SearchFigures & { found?: { seed: number } }) | undefined;
}

export function planShards(run: { seed: number; schedules: number | undefined; workers: number }): Share[];
export function describeSeeds(share: Share): string;
export function combineFigures(figures: SearchFigures[]): SearchFigures;
export function isClean(worker: FinishedWorker): boolean;
export function exitCode(workers: FinishedWorker[]): 0 | 1;
export function replayCommand(run: { seed: number; rollbacks?: boolean; without?: string; bug?: string }): string;

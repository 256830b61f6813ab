/** What a search counts, in one process or summed over the workers of `npm run simulate -- --workers N`. */
export interface SearchFigures {
  schedules: number;
  /** Wall time of the search (of the slowest worker, for combined figures): Jest's start-up not included. */
  wallMs: number;
  simulatedMs: number;
  ids: number;
  scripts: number;
  /** Permits a planted fence bug granted past the fence. */
  pastFence: number;
  /** IDs issued by canaries with another layout than the fleet's. */
  otherLayoutIds: number;
  faultsByKind: Record<string, number>;
  worstRecoveryMs: number;
}

export function noFigures(): SearchFigures;

export function describeFigures(figures: SearchFigures): string[];

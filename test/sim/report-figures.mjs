/**
 * A search's figures in words, written once for both of their readers: the simulator spec prints one search's report
 * with them, and `npm run simulate -- --workers N` prints the workers' combined totals the same way. Plain JavaScript,
 * so that the command can import it without Jest's compiler (its types: report-figures.d.mts).
 */

/** Figures before anything has run: what a search, and the workers' totals, add up from. */
export function noFigures() {
  return {
    schedules: 0,
    wallMs: 0,
    simulatedMs: 0,
    ids: 0,
    scripts: 0,
    pastFence: 0,
    otherLayoutIds: 0,
    faultsByKind: {},
    worstRecoveryMs: 0,
  };
}

/** The figures' lines: schedules and their rate, simulated time and IDs, faults by kind, the slowest recovery. */
export function describeFigures(figures) {
  const seconds = figures.wallMs / 1000;
  const lines = [
    `schedules run: ${figures.schedules} in ${seconds.toFixed(1)} s (${(figures.schedules / seconds).toFixed(2)} per second)`,
    `simulated time: ${(figures.simulatedMs / 3_600_000).toFixed(2)} h; IDs issued and checked: ${figures.ids}; scripts run: ${figures.scripts}`,
    `faults by kind: ${Object.entries(figures.faultsByKind)
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([kind, n]) => `${kind} ${n}`)
      .join(', ')}`,
    `slowest recovery after the faults stopped: ${figures.worstRecoveryMs} ms`,
  ];
  if (figures.otherLayoutIds > 0) lines.push(`IDs issued by canaries with another layout: ${figures.otherLayoutIds}`);
  if (figures.pastFence > 0) lines.push(`permits granted past the fence (planted bug): ${figures.pastFence}`);
  return lines;
}

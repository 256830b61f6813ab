/**
 * The lease's longer log lines, worded in one place: what happened, what it means for the IDs, and what the lease
 * does next. docs/operations.md quotes them (a test checks that every line it quotes is one the library writes).
 */

/**
 * How a claim says that no ID is free for it when that is not simply because every ID is held: the warning when it
 * starts to wait and `LeaseExhaustedError` when it gives up both open with this. Each goes on with ` are held`, then
 * says in its own words what the other IDs are (passed over, or reserved after a data loss) and what it does next;
 * those words stay in one literal with their neighbours, so that docs/operations.md can quote the warning as printed.
 */
export function noneFreeOpening(namespace: string, held: number, idCount: number): string {
  return `No worker ID of namespace "${namespace}" is free for this instance: ${held} of ${idCount}`;
}

/**
 * Says what a lease taken back into new data knows. Only where the script could tell that nothing of this lease
 * was lost (another Redis process serves the namespace, and the record still shows this holder's last renewal:
 * a graceful failover, a slot move, a promoted replica that had every write of this lease) is it no warning;
 * otherwise the library cannot tell what was lost, and says that it may have been.
 */
export function recoveryLine(
  namespace: string,
  workerId: number,
  intact: boolean,
): { level: 'log' | 'warn'; text: string } {
  if (intact) {
    return {
      level: 'log',
      text:
        `Namespace "${namespace}" is served by another Redis process (a failover, a slot move or a restart); worker ID ` +
        `${workerId}'s record came through with its last renewal, so nothing of this lease was lost, and IDs ` +
        'kept flowing. The namespace settles before it hands out IDs nobody holds.',
    };
  }
  return {
    level: 'warn',
    text:
      `Redis may have lost the data of namespace "${namespace}": another Redis process serves it (a restart or ` +
      'failover) with data that may be older, or keys of it are gone or rolled back; worker ID ' +
      `${workerId} was taken back into the current data with its ceiling, and IDs kept flowing`,
  };
}

/** Said once when a claim finds the namespace settling. */
export function settlingLine(namespace: string, waitMs: number): string {
  return (
    `Namespace "${namespace}" is settling after its marker was created (first use, or Redis ` +
    'restarted, failed over or lost some or all of its data); ' +
    `waiting ${Math.round(waitMs)} ms so that earlier holders have stopped`
  );
}

import type { IdService } from '../../lib/index.js';
import { sleep } from './time.js';

/**
 * Draws `batchSize` IDs from every service in turn until stopped, as a busy app does: a refusal (fenced, lost, or
 * claiming again) issues nothing and is skipped. The list is read afresh each round, so a test may add services it
 * boots later. `stop()` ends the loop and resolves after its last round.
 */
export function issueInBackground(
  services: readonly Pick<IdService, 'nextBatch'>[],
  batchSize: number,
): { issued: bigint[]; stop: () => Promise<void> } {
  const issued: bigint[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      for (const ids of [...services]) {
        try {
          issued.push(...ids.nextBatch(batchSize));
        } catch {
          // Refused: nothing issued.
        }
      }
      await sleep(2);
    }
  })();
  return {
    issued,
    stop: async () => {
      running = false;
      await loop;
    },
  };
}

/**
 * Bugs planted through test-only seams, never in the library: patches of the lease's scripts (settling that never
 * lasts, a lapsed lease taken as proof, the behaviour before each known hole's fix) and a wrapper that issues past
 * the fence. The planted-bug tests and `npm run simulate -- --bug NAME` show that the checks catch each one.
 */
import { WorkerUnavailableError } from '../../lib/core/errors.js';
import { SETTLE_AFTER_LOSS_MS } from '../../lib/lease/lease.contract.js';
import { CLAIM_SCRIPT, NOTE_SCRIPT, RELEASE_SCRIPT, RENEW_SCRIPT } from '../../lib/lease/redis/lease.scripts.js';
import type { RedisWorkerSource } from '../../lib/lease/redis-worker.source.js';
import type { WorkerAssignment, WorkerIdSource, WorkerSourceContext } from '../../lib/worker/worker-source.js';
import type { ScriptName } from './sim-backend.js';
import { LAYOUT } from './world-schedule.js';

/** Bugs planted through test-only seams, to show the checks catch them. */
export type PlantedBug =
  'floor' | 'fence' | 'fence-and-ceiling' | 'settling' | 'recovery-proof' | 'clock-check' | PreFixBehaviour;

/**
 * The scripts as they behaved before the fix of each known hole, re-created as patches of today's scripts (the
 * library around them changed too much since for `git checkout <commit> -- lib` to run in the simulator):
 * - `settle-one-ttl`: a new marker settles for the TTL of whoever created it (before 2f55e85: a canary with a
 *   shorter TTL shortened the settling);
 * - `missing-record-resettles`: a claim that meets a free ID without its record starts a new marker and settles
 *   again (before 2f55e85: deleting records again and again kept the namespace settling);
 * - `no-rollback-check`: a renewal does not compare the record's revision, nor tell a live lease handed out again
 *   (before 2f55e85: a rollback in the same process went unseen);
 * - `cursor-kept`: a lost expiry set leaves the cursor where it was (before a65b0a9, found by the simulator);
 * - `cursor-kept-without-meta`: a lost expiry set leaves the cursor where it was when the meta, whose mirror counts
 *   the set's members, was lost with it (found by the simulator after a65b0a9, fixed since);
 * - `contract-not-held-back`: IDs held back after a loss neither record their holders' contract nor refuse a claim
 *   with another (found once the search drew canaries, fixed since);
 * - `layout-unchecked`: a namespace no lease holds takes another layout at once, whatever IDs the old one issued
 *   (found once the search drew canaries with other layouts, fixed since);
 * - `contract-margin-unchecked`: a free ID whose record is gone waits only the claimer's own margin after its lease
 *   ended, whatever clock numbers the contract it replaced allowed (found by a review, fixed since);
 * - `lapse-unchecked`: a renewal that reaches the server after its lease lapsed there answers `ok` while the token
 *   is still on the record (found by a review: a primary paused past its replica's promotion, fixed since);
 * - `cluster-unconfirmed`: a claim on a Cluster is not checked against the primaries' view of the slot's primary (a
 *   claim that waited in a paused primary's socket is handed an ID the promoted node handed out, fixed since).
 */
export type PreFixBehaviour =
  | 'settle-one-ttl'
  | 'missing-record-resettles'
  | 'no-rollback-check'
  | 'cursor-kept'
  | 'cursor-kept-without-meta'
  | 'contract-not-held-back'
  | 'layout-unchecked'
  | 'contract-margin-unchecked'
  | 'lapse-unchecked'
  | 'cluster-unconfirmed';

/** The planted bugs' patched scripts: settling never lasts, a lapsed lease counts as proof. */
export function scriptsFor(bug: PlantedBug | undefined): Record<ScriptName, string> {
  const scripts = { claim: CLAIM_SCRIPT, renew: RENEW_SCRIPT, release: RELEASE_SCRIPT, note: NOTE_SCRIPT };
  if (bug === 'contract-margin-unchecked') {
    scripts.claim = patch(
      scripts.claim,
      "math.max(lapsed, tonumber(redis.call('HGET', META, 'issuedUntil') or '0')) + MARGIN",
      'lapsed + MARGIN',
    );
  }
  if (bug === 'lapse-unchecked') {
    scripts.renew = patch(
      scripts.renew,
      "if math.max(previous_expiry, tonumber(redis.call('ZSCORE', EXPIRY, id) or '-1')) <= now then",
      'if false then',
    );
  }
  if (bug === 'layout-unchecked') {
    scripts.claim = patch(scripts.claim, 'local layout_wait = layout_change_wait(recorded)', 'local layout_wait = 0');
    scripts.renew = patch(scripts.renew, '(recorded == CONFIG or layout_change_wait(recorded) == 0)', 'true');
    scripts.renew = patch(
      scripts.renew,
      "if layout_change_wait(recorded) > 0 then return {'lost', 'config', now, server} end",
      '',
    );
  }
  if (bug === 'settling') {
    for (const name of Object.keys(scripts) as ScriptName[]) {
      scripts[name] = patch(scripts[name], `local SETTLE = ${SETTLE_AFTER_LOSS_MS}`, 'local SETTLE = 0');
    }
  }
  if (bug === 'settle-one-ttl') {
    for (const name of Object.keys(scripts) as ScriptName[]) {
      scripts[name] = patch(scripts[name], "'settleMs', SETTLE,", "'settleMs', TTL,");
    }
  }
  if (bug === 'missing-record-resettles') {
    scripts.claim = patch(
      scripts.claim,
      'elseif lapsed ~= nil then\n',
      "elseif lapsed ~= nil then\n  new_marker()\n  do return {'settling', settling_left(), now, server} end\n",
    );
  }
  if (bug === 'no-rollback-check') {
    scripts.renew = patch(scripts.renew, 'elseif owner == token and not known(', 'elseif false and not known(');
    scripts.renew = patch(scripts.renew, 'elseif owner ~= token and unlapsed then', 'elseif false then');
  }
  if (bug === 'cursor-kept') {
    for (const name of Object.keys(scripts) as ScriptName[]) {
      scripts[name] = patch(
        scripts[name],
        "if not members or redis.call('ZCARD', EXPIRY) < tonumber(members) then",
        'if false then',
      );
    }
  }
  if (bug === 'cursor-kept-without-meta') {
    for (const name of Object.keys(scripts) as ScriptName[]) {
      scripts[name] = patch(
        scripts[name],
        "if not members or redis.call('ZCARD', EXPIRY) < tonumber(members) then",
        "if redis.call('ZCARD', EXPIRY) < tonumber(members or '0') then",
      );
    }
  }
  if (bug === 'contract-not-held-back') {
    scripts.claim = patch(scripts.claim, 'if recorded and live + held_back > 0 then', 'if recorded and live > 0 then');
    scripts.renew = patch(
      scripts.renew,
      "if redis.call('HGET', META, 'confirmed') ~= '1' then adopt_contract(recorded) end",
      '',
    );
  }
  if (bug === 'recovery-proof') {
    scripts.renew = patch(
      scripts.renew,
      'local unlapsed = now + proof_margin < previous_expiry',
      'local unlapsed = true',
    );
  }
  return scripts;
}

function patch(script: string, from: string, to: string): string {
  if (!script.includes(from)) throw new Error(`planted bug: "${from}" not found in the script`);
  return script.split(from).join(to);
}

/**
 * The planted fence bugs: a wrapper around the lease that issues past its fence, where the real permit refuses with
 * 'fenced': `fence` answers with the lease's confirmed ceiling, `fence-and-ceiling` with no ceiling at all (the
 * layout's last tick). Test-only; it reads the lease's private phase.
 */
export class FenceIgnored implements WorkerIdSource {
  readonly kind = 'redis';

  constructor(
    private readonly inner: RedisWorkerSource,
    private readonly keepCeiling: boolean,
    private readonly onPastFence: () => void,
  ) {}

  async start(context: WorkerSourceContext): Promise<WorkerAssignment> {
    const proxy: WorkerSourceContext = {
      layout: context.layout,
      clock: context.clock,
      logger: context.logger,
      lastTimestamp: () => context.lastTimestamp(),
      reassign: (assignment, reason) => context.reassign(assignment && this.wrap(assignment), reason),
    };
    return this.wrap(await this.inner.start(proxy));
  }

  stop(lastTimestamp: number): Promise<void> {
    return this.inner.stop(lastTimestamp);
  }

  requestSwitch(lastTimestamp: number, reason: string): boolean {
    return this.inner.requestSwitch(lastTimestamp, reason);
  }

  whenReady(): Promise<void> {
    return this.inner.whenReady();
  }

  private wrap(assignment: WorkerAssignment): WorkerAssignment {
    const permit = assignment.permit;
    if (permit === undefined) return assignment;
    const inner = this.inner as unknown as { phase: { name: string; lease?: { ceilingTicks: number } } };
    return {
      ...assignment,
      permit: {
        ceiling: (nowMs) => {
          try {
            return permit.ceiling(nowMs);
          } catch (error) {
            const lease = inner.phase.lease;
            if (error instanceof WorkerUnavailableError && error.reason === 'fenced' && lease !== undefined) {
              this.onPastFence();
              return this.keepCeiling ? lease.ceilingTicks : LAYOUT.maxTimestamp;
            }
            throw error;
          }
        },
        ceilingReached: () => permit.ceilingReached?.(),
      },
    };
  }
}

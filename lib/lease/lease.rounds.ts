import { randomUUID } from 'node:crypto';
import type { Clocks } from '../core/clock.js';
import type { Layout } from '../core/layout.js';
import { ticksAtMs } from '../core/time-units.js';
import { noteOwnHighWaterMs, ownHighWaterMs, trackHeld } from '../worker/process-workers.js';
import type { CapacityGauge } from './capacity-gauge.js';
import type { LeaseBackend } from './lease.backend.js';
import { ceilingMsFor, fenceAtMono, workerOf } from './lease.math.js';
import type { HeldLease } from './lease.phase.js';
import type { ClaimReply, ClaimRequest, ServerStamp } from './redis/lease.protocol.js';
import type { LeaseSettings } from './lease.settings.js';
import type { ServerClock } from './server-clock.js';

/** The range of a claim's spread pick: an integer the script reduces modulo the number of IDs it spreads over. */
const SPREAD_PICKS = 2 ** 31;

/** What a renewal found: extended (or taken back after a data loss), or lost. */
/** `recovered`: taken back after the namespace's marker changed; `intact` when nothing of this lease was lost. */
export type ExtendOutcome = { kind: 'ok' } | { kind: 'recovered'; intact: boolean } | { kind: 'lost'; reason: string };

/** How a lease was given back: released by its token, or, the record no longer ours, left with a note. */
export interface ReleaseOutcome {
  kind: 'released' | 'noted';
  /** The timestamp written on the record (holder ms, -1 when nothing was issued). */
  lastMs: number;
}

/** A claim's reply with what the lease needs from the moment it was sent. */
export interface ClaimRound {
  reply: ClaimReply;
  token: string;
  holderNowMs: number;
  sentMono: number;
}

/**
 * The lease's round trips to its backend, each measured against the server's clock: claim, extend (renew), release
 * and note. A round returns what it found and touches no state beyond the lease it was given.
 */
export class LeaseRounds {
  /** The ID whose record the next claim declares: the one the last claim named (0 before any). */
  private candidate = 0;
  /** Whether `candidate` is the one the last reply (`retry`) named, so that finding it taken means contention. */
  private namedByReply = false;

  constructor(
    private readonly backend: LeaseBackend,
    private readonly serverClock: ServerClock,
    private readonly clocks: Clocks,
    private readonly settings: LeaseSettings,
    private readonly layout: Layout,
    private readonly fixedDatacenterId: number,
    private readonly capacity: CapacityGauge,
    /** Picks which free ID a contended claim is sent to; injected so that the simulator seeds it. */
    private readonly random: () => number = Math.random,
  ) {}

  /**
   * One claim. `prior`: the ID this instance lost while the namespace settled and the token it held it by; the
   * script hands that ID out first while it is reserved for that token, so the claim names it until a reply names
   * another.
   */
  async claim(excluded: readonly number[], prior?: ClaimRequest['prior']): Promise<ClaimRound> {
    const token = randomUUID();
    const sent = this.stamp();
    if (prior !== undefined && !this.namedByReply) this.candidate = prior.id;
    const spread = this.namedByReply ? Math.floor(this.random() * SPREAD_PICKS) : undefined;
    const reply = await this.backend.claim({
      token,
      holderNowMs: sent.wall,
      excluded,
      candidate: this.candidate,
      ...(spread === undefined ? {} : { spread }),
      ...(prior === undefined ? {} : { prior }),
    });
    this.observe(sent, reply);
    // After `wait` the claim names the same ID again (its record is gone; it is free once the time rule has run):
    // still the one a reply named, so that the script takes it rather than send the claim elsewhere.
    this.namedByReply = reply.kind === 'retry' || (reply.kind === 'wait' && this.namedByReply);
    if (reply.kind === 'retry') this.candidate = reply.candidate;
    if (reply.kind === 'ok' || reply.kind === 'exhausted') this.capacity.observe(reply.held, this.clocks.now());
    return { reply, token, holderNowMs: sent.wall, sentMono: sent.mono };
  }

  /**
   * The lease a successful claim stands for. Whatever the backend says, its floor is never below what this process
   * itself issued under the ID before (a clock-back switch or a loss, then a data loss that handed the ID back
   * without its record). `lastMsOf` reads the generator's last timestamp while the lease is current (-1 after).
   */
  toLease(
    round: ClaimRound & { reply: Extract<ClaimReply, { kind: 'ok' }> },
    lastMsOf: (lease: HeldLease) => number,
  ): HeldLease {
    const { reply } = round;
    const recordKey = this.backend.recordKey(reply.id);
    const floorRaw = Math.max(reply.floorMs, ownHighWaterMs(recordKey));
    // The ceiling the claim script stored: it bounds what may be issued until the first renewal, which raises it
    // above this process's own mark if that is higher.
    const ceilingMs = ceilingMsFor(round.holderNowMs, reply.floorMs, this.settings);
    const lease: HeldLease = {
      id: reply.id,
      token: round.token,
      marker: reply.marker,
      ...workerOf(reply.id, this.layout, this.settings.allocateDatacenter, this.fixedDatacenterId),
      floorMs: floorRaw < 0 ? null : floorRaw,
      ceilingMs,
      ceilingTicks: ticksAtMs(this.layout, ceilingMs),
      fenceAt: fenceAtMono(round.sentMono, this.settings),
      serverExpiry: reply.expiry,
      rev: 0,
      sentRev: 0,
      untrack: () => undefined,
    };
    lease.untrack = trackHeld(recordKey, () => lastMsOf(lease));
    return lease;
  }

  /**
   * One renewal: extends the lease and raises its ceiling in the backend, then locally. The fence moves only once
   * the backend confirmed, counted from when the request was sent. After a data loss the same call takes the ID
   * back, with the previous lease's expiry as proof that it had not lapsed.
   *
   * @throws when the backend cannot be reached or does not confirm in time
   */
  async extend(lease: HeldLease, lastMs: number): Promise<ExtendOutcome> {
    const sent = this.stamp();
    const ceilingMs = ceilingMsFor(sent.wall, lastMs, this.settings);
    const knownRevs = [...new Set([lease.rev, lease.sentRev])];
    const rev = lease.sentRev + 1;
    lease.sentRev = rev;
    const reply = await this.backend.renew({
      id: lease.id,
      token: lease.token,
      ceilingMs,
      marker: lease.marker,
      previousExpiry: lease.serverExpiry,
      marginMs: this.settings.fenceMarginMs,
      knownRevs,
      rev,
    });
    this.observe(sent, reply);
    if (reply.kind === 'lost') return { kind: 'lost', reason: reply.reason };
    // The script ran and wrote the revision, whether or not the confirmation below succeeds.
    lease.rev = rev;
    this.capacity.observe(reply.held, this.clocks.now());
    const unconfirmed = await this.backend.confirm(reply, 'renewal');
    if (unconfirmed !== undefined) throw new Error(unconfirmed);
    lease.marker = reply.marker;
    lease.ceilingMs = Math.max(lease.ceilingMs, ceilingMs);
    lease.ceilingTicks = ticksAtMs(this.layout, lease.ceilingMs);
    lease.fenceAt = fenceAtMono(sent.mono, this.settings);
    lease.serverExpiry = reply.expiry;
    return reply.kind === 'ok' ? { kind: 'ok' } : { kind: 'recovered', intact: reply.intact === true };
  }

  /** Undefined when the claim's server is confirmed as the primary, else why not. */
  confirmClaim(reply: ServerStamp): Promise<string | undefined> {
    return this.backend.confirm(reply, 'claim');
  }

  /**
   * Gives the lease back with `lastMs` as its ceiling (never below its floor: a lease claimed during shutdown, or
   * while waiting for its floor, has issued nothing, and `lastMs` may come from the previous worker ID's frame).
   * When the record is no longer ours, the last timestamp must still reach the ID's next holder: a note.
   */
  async release(lease: HeldLease, lastMs: number): Promise<ReleaseOutcome> {
    const ceilingMs = Math.max(lastMs, lease.floorMs ?? -1);
    const reply = await this.backend.release(lease.id, lease.token, ceilingMs);
    if (reply.kind === 'released') return { kind: 'released', lastMs: ceilingMs };
    await this.note(lease, ceilingMs);
    return { kind: 'noted', lastMs: ceilingMs };
  }

  /** Raises the record's ceiling to `lastMs` (never lowers it), recreating the record if the backend lost it. */
  async note(lease: HeldLease, lastMs: number): Promise<void> {
    noteOwnHighWaterMs(this.backend.recordKey(lease.id), lastMs);
    await this.backend.note(lease.id, lastMs);
  }

  /** The wall and monotonic clocks now, read together. */
  private stamp(): { wall: number; mono: number } {
    return { wall: this.clocks.now(), mono: this.clocks.monotonicNow() };
  }

  private observe(sent: { wall: number; mono: number }, reply: ServerStamp): void {
    this.serverClock.observe(sent, this.stamp(), reply.serverMs, reply.runId);
  }
}

/** A renewal's loss reason in words, for the log. */
export function describeLoss(reason: string): string {
  switch (reason) {
    case 'marker':
      return (
        'Redis restarted, failed over or lost some or all of its data, and the previous lease had lapsed or the ' +
        'namespace had settled: the namespace marker changed'
      );
    case 'missing':
      return 'its record is gone from Redis';
    case 'taken':
      return 'another instance holds it now';
    case 'lapsed':
      return 'it lapsed on the Redis server before this renewal reached it (a server that answers again after a pause)';
    case 'config':
      return 'the namespace runs another contract (layout, TTL, fence margin or clock settings) than this instance';
    case 'rollback':
      return (
        'Redis rolled its data back (a reload or restore in the same process) and handed the ID to another ' +
        'instance; the namespace settles again'
      );
    default:
      return reason;
  }
}

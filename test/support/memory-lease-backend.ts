import type { LeaseBackend } from '../../lib/lease/lease.backend.js';
import type {
  ClaimReply,
  ClaimRequest,
  NoteReply,
  ReleaseReply,
  RenewReply,
  RenewRequest,
  ServerStamp,
} from '../../lib/lease/redis/lease.protocol.js';
import { SETTLE_AFTER_LOSS_MS } from '../../lib/lease/lease.contract.js';

interface Entry {
  token: string | null;
  marker: string;
  ceiling: number;
  noted: number;
  expiry: number;
  rev: number;
}

/**
 * The lease scripts' rules in memory, for the lease's fast tests on fake time: exclusive claims, ceilings, notes,
 * settling after a data loss and taking an ID back with proof. It is pure logic beside the real-Redis suites,
 * which stay the proof of what Redis does. Calls fail while `down` is set, as a partitioned Redis would.
 */
export class MemoryLeaseBackend implements LeaseBackend {
  down = false;
  /** Notes fail while set, as when only the note's round trip is refused. */
  notesDown = false;
  /** How long every reply takes (on the test's timers). */
  latencyMs = 0;
  /** Server time minus the time the test runs on (`Date.now()`, faked by jest): a skewed Redis clock. */
  serverSkewMs = 0;
  readonly calls = { claim: 0, renew: 0, release: 0, note: 0 };
  private entries = new Map<number, Entry>();
  private marker = 'm0';
  private settlingUntil = 0;
  private markers = 0;

  constructor(
    private readonly idCount: number,
    private readonly ttlMs: number,
    /** Keeps the process-wide registry of own timestamps apart between tests. */
    private readonly namespace: string,
  ) {}

  connect(): Promise<void> {
    return Promise.resolve();
  }

  /** Redis lost everything: a new marker, and the namespace settles (as long as the scripts make it). */
  loseData(): void {
    this.entries.clear();
    this.marker = `m${++this.markers}`;
    this.settlingUntil = this.now() + SETTLE_AFTER_LOSS_MS;
  }

  /** Another holder takes `id` (an operator's mistake, or a holder paused past its lease). */
  steal(id: number): void {
    const entry = this.entries.get(id);
    if (entry !== undefined) entry.token = 'someone-else';
  }

  ceilingOf(id: number): number | undefined {
    return this.entries.get(id)?.ceiling;
  }

  claim(request: Omit<ClaimRequest, 'host' | 'pid'>): Promise<ClaimReply> {
    return this.answer('claim', (now) => {
      if (now < this.settlingUntil) return { kind: 'settling', waitMs: this.settlingUntil - now };
      for (let id = 0; id < this.idCount; id++) {
        const entry = this.entries.get(id);
        if (request.excluded.includes(id) || (entry !== undefined && entry.expiry > now)) continue;
        const floorMs = entry === undefined ? -1 : Math.max(entry.ceiling, entry.noted);
        const expiry = now + this.ttlMs;
        const ceiling = Math.max(request.holderNowMs, floorMs) + this.ttlMs;
        this.entries.set(id, {
          token: request.token,
          marker: this.marker,
          ceiling,
          noted: entry?.noted ?? -1,
          expiry,
          rev: 0,
        });
        return { kind: 'ok', id, floorMs, marker: this.marker, expiry, held: this.held(now) };
      }
      const live = [...this.entries.values()].filter((entry) => entry.expiry > now).map((entry) => entry.expiry);
      return { kind: 'exhausted', held: this.held(now), soonestExpiry: live.length === 0 ? -1 : Math.min(...live) };
    });
  }

  renew(request: RenewRequest): Promise<RenewReply> {
    return this.answer('renew', (now) => {
      const entry = this.entries.get(request.id);
      const expiry = now + this.ttlMs;
      if (request.marker !== this.marker) {
        if (now + request.marginMs >= request.previousExpiry || now >= this.settlingUntil) {
          return { kind: 'lost', reason: 'marker' };
        }
        if (entry !== undefined && entry.token !== request.token) return { kind: 'lost', reason: 'taken' };
        const ceiling = Math.max(entry?.ceiling ?? -1, entry?.noted ?? -1, request.ceilingMs);
        this.entries.set(request.id, {
          token: request.token,
          marker: this.marker,
          ceiling,
          noted: -1,
          expiry,
          rev: request.rev,
        });
        return { kind: 'recovered', expiry, marker: this.marker, held: this.held(now) };
      }
      if (entry === undefined) return { kind: 'lost', reason: 'missing' };
      if (entry.token !== request.token) return { kind: 'lost', reason: 'taken' };
      entry.ceiling = Math.max(entry.ceiling, request.ceilingMs);
      entry.expiry = expiry;
      entry.rev = request.rev;
      return { kind: 'ok', expiry, marker: this.marker, held: this.held(now) };
    });
  }

  release(id: number, token: string, lastMs: number): Promise<ReleaseReply> {
    return this.answer('release', (now) => {
      const entry = this.entries.get(id);
      if (entry === undefined || entry.token !== token) return { kind: 'not-owner' };
      entry.ceiling = lastMs;
      entry.token = null;
      entry.expiry = now;
      return { kind: 'released' };
    });
  }

  note(id: number, lastMs: number): Promise<NoteReply> {
    if (this.notesDown) return Promise.reject(new Error('note refused (test)'));
    return this.answer('note', (now) => {
      const entry = this.entries.get(id) ?? {
        token: null,
        marker: this.marker,
        ceiling: -1,
        noted: -1,
        expiry: now,
        rev: 0,
      };
      entry.ceiling = Math.max(entry.ceiling, lastMs);
      entry.noted = Math.max(entry.noted, lastMs);
      this.entries.set(id, entry);
      return { kind: 'noted' };
    });
  }

  confirm(): Promise<string | undefined> {
    return Promise.resolve(undefined);
  }

  recordKey(id: number): string {
    return `memory:${this.namespace}:w:${id}`;
  }

  close(): Promise<void> {
    return Promise.resolve();
  }

  /** Live leases, as the scripts' ZCOUNT counts them. */
  private held(now: number): number {
    return [...this.entries.values()].filter((entry) => entry.expiry > now).length;
  }

  private now(): number {
    return Date.now() + this.serverSkewMs;
  }

  private answer<T extends object>(
    op: keyof MemoryLeaseBackend['calls'],
    body: (now: number) => T,
  ): Promise<T & ServerStamp> {
    this.calls[op]++;
    if (this.down) return Promise.reject(new Error('connection refused (test)'));
    const now = this.now();
    const reply = { ...body(now), serverMs: now, runId: 'memory', replId: 'memory' };
    if (this.latencyMs === 0) return Promise.resolve(reply);
    return new Promise((resolve) => setTimeout(() => resolve(reply), this.latencyMs));
  }
}

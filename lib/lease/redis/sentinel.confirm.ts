import type { RedisClientLike } from '../lease.options.js';

/** The part of an ioredis client's options that names its Sentinels. */
interface SentinelOptions {
  sentinels?: { host?: string; port?: number }[];
  name?: string;
  sentinelUsername?: string;
  sentinelPassword?: string;
}

/** A connection to one Sentinel. */
interface SentinelLink {
  address: string;
  call(command: string, ...args: (string | number)[]): Promise<unknown>;
  disconnect(): void;
}

/** What a majority of the Sentinels said about the master. */
export type SentinelVerdict =
  | { kind: 'confirmed'; confirmations: number; of: number }
  | { kind: 'replaced'; masterRunId: string; of: number }
  | { kind: 'unconfirmed'; detail: string; elsewhere: boolean };

/** What the Sentinels are set to, for the bootstrap check. */
export interface SentinelSetup {
  sentinels: number;
  quorum: number | null;
  reachable: number;
}

/**
 * Asks the Sentinels whether the Redis process that just answered a lease script is the master they agree on.
 *
 * A promoted replica can hand out a worker ID once its namespace has settled for one TTL; a holder still renewing on
 * the old primary (cut off from the Sentinels but not from the holder: a split brain) would never see that. So each
 * renewal counts only when a majority of the Sentinels name the answering process (by `run_id`) as the master and do
 * not see it down: a renewal sent before the promotion can be confirmed, one sent after it cannot, and the holder
 * fences `ttl - fenceMarginMs` after its last confirmed renewal, before the promoted side's settling ends.
 */
export class SentinelConfirm {
  private links: SentinelLink[] | undefined;
  /** The master as the Sentinels described it at the last confirmation: where, which process, which epoch. */
  private lastConfirmed: { runId: string; address: string; epoch: string } | undefined;

  private constructor(
    private readonly options: SentinelOptions & { name: string; sentinels: { host?: string; port?: number }[] },
    private readonly timeoutMs: number,
  ) {}

  /** A confirmer for an ioredis client created with `sentinels` and `name`; undefined for any other client. */
  static forClient(client: RedisClientLike | undefined, timeoutMs: number): SentinelConfirm | undefined {
    const options = (client as { options?: SentinelOptions } | undefined)?.options;
    if (!Array.isArray(options?.sentinels) || options.sentinels.length === 0 || typeof options.name !== 'string') {
      return undefined;
    }
    return new SentinelConfirm(
      { ...options, name: options.name, sentinels: options.sentinels.map((s) => ({ ...s })) },
      timeoutMs,
    );
  }

  get masterName(): string {
    return this.options.name;
  }

  /**
   * Whether a majority of the Sentinels name `runId` as a master that is up.
   *
   * A Sentinel learns a master's `run_id` from its INFO, every 10 s: after a plain restart of the master (faster than
   * `down-after-milliseconds`, so no failover) it names the previous process for a while. Such an answer confirms
   * too, when it describes the master exactly as at this holder's last confirmation (same address, same previous
   * `run_id`, same configuration epoch) and not down: no failover happened since (a promotion changes the epoch and
   * the address), so the process that answered at the master's address replaced it there. The restart lost the
   * data, which the namespace marker handles.
   */
  async confirm(runId: string): Promise<SentinelVerdict> {
    const answers = await this.askAll();
    const known = Math.max(this.options.sentinels.length, ...answers.map((a) => a?.sentinels ?? 0));
    const majority = Math.floor(known / 2) + 1;
    const last = this.lastConfirmed;
    const unchangedSinceLast = (answer: MasterView): boolean =>
      last !== undefined &&
      answer.runId === last.runId &&
      answer.address === last.address &&
      answer.epoch === last.epoch;
    let confirmations = 0;
    const others = new Map<string, number>();
    for (const answer of answers) {
      if (answer === undefined) continue;
      if ((answer.runId === runId || unchangedSinceLast(answer)) && !answer.down) confirmations++;
      else if (answer.runId !== runId && answer.runId !== '') {
        others.set(answer.runId, (others.get(answer.runId) ?? 0) + 1);
      }
    }
    if (confirmations >= majority) {
      const fresh = answers.find((a) => a !== undefined && a.runId === runId && !a.down);
      if (fresh !== undefined) this.lastConfirmed = { runId, address: fresh.address, epoch: fresh.epoch };
      return { kind: 'confirmed', confirmations, of: known };
    }
    for (const [masterRunId, count] of others) {
      if (count >= majority) return { kind: 'replaced', masterRunId, of: known };
    }
    const reached = answers.filter((a) => a !== undefined).length;
    return {
      kind: 'unconfirmed',
      // No Sentinel names the process that answered as the master: the connection may be to a stale primary.
      elsewhere: confirmations === 0 && others.size > 0,
      detail:
        `${confirmations} of ${known} Sentinels confirm the Redis process that answered (${runId}) as the master of ` +
        `"${this.options.name}" (${reached} reachable; a majority, ${majority}, is needed; they name ` +
        `${answers.map((a) => (a === undefined ? 'nothing' : `${a.runId || '?'}${a.down ? ` (${a.flags})` : ''}`)).join(', ')})`,
    };
  }

  /** The Sentinels' set-up: how many there are, the quorum, how many answered. */
  async setup(): Promise<SentinelSetup> {
    const answers = await this.askAll();
    const reached = answers.filter((a) => a !== undefined);
    return {
      sentinels: Math.max(this.options.sentinels.length, ...reached.map((a) => a.sentinels)),
      quorum: reached.length === 0 ? null : Math.min(...reached.map((a) => a.quorum)),
      reachable: reached.length,
    };
  }

  close(): void {
    for (const link of this.links ?? []) link.disconnect();
    this.links = undefined;
  }

  private async askAll(): Promise<(MasterView | undefined)[]> {
    const links = await this.connect();
    return Promise.all(links.map((link) => this.ask(link).catch(() => undefined)));
  }

  private async ask(link: SentinelLink): Promise<MasterView> {
    const reply = await withTimeout(link.call('SENTINEL', 'MASTER', this.options.name), this.timeoutMs);
    const fields = new Map<string, string>();
    const flat = reply as unknown[];
    for (let i = 0; i + 1 < flat.length; i += 2) fields.set(String(flat[i]), String(flat[i + 1]));
    const flags = (fields.get('flags') ?? '').split(',');
    return {
      runId: fields.get('runid') ?? '',
      address: `${fields.get('ip') ?? ''}:${fields.get('port') ?? ''}`,
      epoch: fields.get('config-epoch') ?? '',
      flags: fields.get('flags') ?? '',
      down: flags.some((f) => f === 's_down' || f === 'o_down' || f.startsWith('failover')),
      quorum: Number(fields.get('quorum') ?? 0),
      sentinels: Number(fields.get('num-other-sentinels') ?? 0) + 1,
    };
  }

  private async connect(): Promise<SentinelLink[]> {
    if (this.links !== undefined) return this.links;
    // A Sentinel client means ioredis is installed; it is loaded only here, like the client the lease creates.
    const { Redis } = await import('ioredis');
    this.links = this.options.sentinels.map((s) => {
      const client = new Redis({
        host: s.host ?? '127.0.0.1',
        port: s.port ?? 26379,
        username: this.options.sentinelUsername,
        password: this.options.sentinelPassword,
        connectTimeout: this.timeoutMs,
        enableOfflineQueue: true,
        maxRetriesPerRequest: 0,
        retryStrategy: () => Math.min(this.timeoutMs, 500),
      });
      client.on('error', () => undefined);
      return {
        address: `${s.host ?? '127.0.0.1'}:${s.port ?? 26379}`,
        call: (command: string, ...args: (string | number)[]) => client.call(command, ...args),
        disconnect: () => client.disconnect(),
      };
    });
    return this.links;
  }
}

interface MasterView {
  runId: string;
  /** `ip:port` as the Sentinel announces the master. */
  address: string;
  /** The configuration epoch: a failover raises it. */
  epoch: string;
  flags: string;
  down: boolean;
  quorum: number;
  sentinels: number;
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Sentinel did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

import { withTimeout } from './lease.client.js';

/** A node of an ioredis `Cluster`, as the confirmation uses it. */
interface NodeLike {
  call(command: string, ...args: string[]): Promise<unknown>;
}

/** The part of an ioredis `Cluster` the confirmation uses. */
interface ClusterLike {
  isCluster: true;
  options?: { keyPrefix?: string; redisOptions?: { keyPrefix?: string } };
  nodes(role: 'all'): NodeLike[];
  refreshSlotsCache?(callback?: (error?: Error | null) => void): void;
}

/** What the nodes of the Cluster said about the primary of the namespace's slot. */
export type ClusterVerdict =
  | { kind: 'confirmed'; confirmations: number; of: number }
  /** The nodes refuse the commands (an ACL, a managed Redis that renames them): nothing to check by. */
  | { kind: 'unsupported'; detail: string }
  | { kind: 'unconfirmed'; detail: string };

/** One node's answer: which process it is, and what it believes about the cluster's primaries. */
interface NodeView {
  runId: string;
  myId: string;
  /** Whether the node is a primary that serves slots, in its own view: only those vote in a failover. */
  servesSlots: boolean;
  /** Primaries that serve slots, in its view. */
  primaries: number;
  /** Its own configuration epoch: a promotion gives the promoted node a higher one than any before. */
  epoch: number;
  /** The primary that serves the namespace's slot in its view, whether it flags that one failing, and its epoch. */
  owner: { id: string; failing: boolean; epoch: number } | undefined;
}

/** A node's view; `refused` when it refuses the commands (no permission, unknown); undefined when it gives none. */
type Answer = NodeView | 'refused' | undefined;

/**
 * Asks the nodes of a Redis Cluster whether the process that just answered a claim is the primary of the namespace's
 * slot, as a majority of the cluster's primaries see it.
 *
 * A primary paused (SIGSTOP, a VM paused) past its replica's promotion runs, when it resumes, what waited in its
 * sockets on its old data, and serves its clients until a message of the cluster tells it it was demoted. A claim
 * among those could be handed an ID that the promoted node handed out meanwhile. An automatic failover needs the
 * votes of a majority of the primaries, each of which flags the old primary failing (`fail`) when it votes; the
 * promoted node tells every node at once that it serves the slot. So a claim counts only when a majority of the
 * primaries name the process that answered as the slot's primary without flagging it failing, and no primary names
 * another one (that it does not flag failing): a majority shares a primary with the one that voted, which names the
 * promoted node, or still flags the old one. Every node is waited for (up to the time limit), so that the verdict does
 * not depend on which answers come first. What this does not cover is in docs/lease.md ("Limits stated plainly").
 *
 * Renewals need no confirmation: one that reaches a server after its lease lapsed there is lost (the renewal script),
 * and a lease that has not lapsed on the old primary has not lapsed on the promoted one, which has every write the
 * old one took before it paused (or the namespace settles: its replication ID changed).
 */
export class ClusterConfirm {
  private constructor(
    private readonly cluster: ClusterLike,
    private readonly timeoutMs: number,
  ) {}

  /** A confirmer for an ioredis Cluster client; undefined for any other client. */
  static forClient(client: unknown, timeoutMs: number): ClusterConfirm | undefined {
    const candidate = client as Partial<ClusterLike> | undefined;
    if (candidate?.isCluster !== true || typeof candidate.nodes !== 'function') return undefined;
    return new ClusterConfirm(candidate as ClusterLike, timeoutMs);
  }

  /** Whether a majority of the primaries name the process `runId` (`run_id`, or `run_id:replid`) as `key`'s primary. */
  async confirm(serverId: string, key: string): Promise<ClusterVerdict> {
    const runId = serverId.split(':')[0];
    // Every node the client knows, its replicas too: after its map of the slots changed, an old primary is one.
    const nodes = this.cluster.nodes('all');
    // ioredis puts its key prefix before every key a command names, and a slot is the prefixed key's.
    const options = this.cluster.options;
    const prefixed = `${options?.keyPrefix ?? options?.redisOptions?.keyPrefix ?? ''}${key}`;
    const answers = await Promise.all(nodes.map((node) => this.ask(node, prefixed)));
    const views = answers.filter((answer): answer is NodeView => answer !== undefined && answer !== 'refused');
    // Refused (no permission, no such command) by every node that answered: none will say, now or later.
    if (views.length === 0 && answers.some((answer) => answer === 'refused')) {
      return { kind: 'unsupported', detail: 'the nodes refuse CLUSTER NODES, INFO or CLUSTER KEYSLOT' };
    }
    const verdict = judge(views, runId, nodes.length);
    // A failover may be under way, or over: the client's map of the slots may name the old primary.
    if (verdict.kind !== 'confirmed') this.refresh();
    return verdict;
  }

  /** A node's view, `refused` when it refuses the commands, undefined when it does not answer them. */
  private async ask(node: NodeLike, key: string): Promise<Answer> {
    try {
      const [info, nodes, slot] = await withTimeout(
        Promise.all([node.call('INFO', 'server'), node.call('CLUSTER', 'NODES'), node.call('CLUSTER', 'KEYSLOT', key)]),
        this.timeoutMs,
        'CLUSTER NODES',
      );
      return parseView(String(info), String(nodes), Number(slot));
    } catch (error) {
      // Loading, busy, down: no view now. Refused for good only by a permission or a command it does not have.
      return isRefusal(error) ? 'refused' : undefined;
    }
  }

  private refresh(): void {
    this.cluster.refreshSlotsCache?.(() => undefined);
  }
}

/**
 * The verdict on the nodes' views: confirmed when a majority of the primaries (of the most any view counts) name the
 * node whose `run_id` answered as the slot's primary without flagging it failing, and no primary names another that
 * it does not flag failing. A node naming itself is a word against another only with a higher configuration epoch
 * than the answering node's own: an old primary believes it serves the slot until it learns otherwise, and the
 * promoted node knows of its promotion before anyone (Redis settles two claims on a slot by the higher epoch).
 */
function judge(views: readonly NodeView[], runId: string, asked: number): ClusterVerdict {
  const answering = views.find((view) => view.runId === runId);
  const known = Math.max(1, ...views.map((view) => view.primaries));
  const majority = Math.floor(known / 2) + 1;
  if (answering === undefined) {
    return {
      kind: 'unconfirmed',
      detail:
        `the Redis process that answered (${runId}) is none of the ${views.length} of ${asked} cluster nodes that ` +
        'answered' +
        (views.length === asked
          ? ' (a node the client does not know yet, or, if this persists, a proxy that hides the shards, as some ' +
            'managed Redis services are: there, set redis.confirmWithCluster: false)'
          : ''),
    };
  }
  let confirmations = 0;
  const others = new Set<string>();
  for (const view of views) {
    if (!view.servesSlots || view.owner === undefined) continue;
    if (view.owner.id === answering.myId) {
      if (!view.owner.failing) confirmations++;
    } else if (!view.owner.failing && (view.owner.id !== view.myId || view.owner.epoch > answering.epoch)) {
      others.add(view.owner.id);
    }
  }
  if (confirmations >= majority && others.size === 0) return { kind: 'confirmed', confirmations, of: known };
  return {
    kind: 'unconfirmed',
    detail:
      `${confirmations} of ${known} primaries name the Redis process that answered (${runId}, node ` +
      `${answering.myId}) as the primary of the namespace's slot and do not flag it failing (a majority, ` +
      `${majority}, is needed)${others.size > 0 ? `; ${[...others].join(', ')} named instead` : ''}`,
  };
}

/** An error reply that does not pass by waiting: no permission (ACL), or a command the server does not have. */
function isRefusal(error: unknown): boolean {
  if (!(error instanceof Error) || error.name !== 'ReplyError') return false;
  return /^(NOPERM|ERR unknown (sub)?command)/i.test(error.message);
}

/** A node's `INFO server` and `CLUSTER NODES` read for the primary of `slot`. */
export function parseView(info: string, nodes: string, slot: number): NodeView | undefined {
  const runId = /run_id:(\w+)/.exec(info)?.[1];
  if (runId === undefined) return undefined;
  let myId: string | undefined;
  let epoch = 0;
  let servesSlots = false;
  let primaries = 0;
  let owner: NodeView['owner'];
  for (const line of nodes.split('\n')) {
    const fields = line.trim().split(' ');
    if (fields.length < 8) continue;
    const [id, , flagText] = fields;
    const configEpoch = Number(fields[6]) || 0;
    const flags = flagText.split(',');
    const ranges = fields.slice(8).filter((range) => !range.startsWith('['));
    const primary = flags.includes('master') && ranges.length > 0;
    if (primary) primaries++;
    if (flags.includes('myself')) {
      myId = id;
      epoch = configEpoch;
      servesSlots = primary;
    }
    if (primary && ranges.some((range) => inRange(range, slot))) {
      owner = { id, failing: flags.includes('fail') || flags.includes('fail?'), epoch: configEpoch };
    }
  }
  if (myId === undefined) return undefined;
  return { runId, myId, epoch, servesSlots, primaries, owner };
}

function inRange(range: string, slot: number): boolean {
  const [low, high = low] = range.split('-').map(Number);
  return slot >= low && slot <= high;
}

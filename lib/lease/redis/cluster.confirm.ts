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
  /** No node would say (CLUSTER NODES refused everywhere, as an ACL or a managed Redis may): nothing to check by. */
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
  /** The primary that serves the namespace's slot, in its view, and whether it flags that one failing. */
  owner: { id: string; failing: boolean } | undefined;
}

/**
 * Asks the nodes of a Redis Cluster whether the process that just answered a claim is the primary of the namespace's
 * slot, as a majority of the cluster's primaries see it.
 *
 * A primary paused (SIGSTOP, a VM paused) past its replica's promotion runs, when it resumes, what waited in its
 * sockets on its old data, before a message of the cluster tells it it was demoted. A claim among those could be
 * handed an ID that the promoted node handed out meanwhile. A promotion the cluster decides needs the votes of a
 * majority of the primaries, each of which flags the old primary failing (`fail`) when it votes, and keeps the flag
 * until it learns that the replica serves the slot now. So a claim counts only when a majority of the primaries name
 * the process that answered as the slot's primary and do not flag it failing: any majority shares a primary with the
 * one that voted. (An operator's `CLUSTER FAILOVER TAKEOVER`, which takes no votes, is not covered.)
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
    const nodes = this.cluster.nodes('all');
    // ioredis puts its key prefix before every key a command names, and a slot is the prefixed key's.
    const options = this.cluster.options;
    const prefixed = `${options?.keyPrefix ?? options?.redisOptions?.keyPrefix ?? ''}${key}`;
    const answers = await this.askUntil(
      nodes,
      prefixed,
      (views) => judge(views, runId, nodes.length).kind === 'confirmed',
    );
    const views = viewsOf(answers);
    if (views.length === 0 && answers.some((answer) => answer === 'refused')) {
      return { kind: 'unsupported', detail: 'CLUSTER NODES is refused' };
    }
    const verdict = judge(views, runId, nodes.length);
    // A failover may be under way, or over: the client's map of the slots may name the old primary.
    if (verdict.kind !== 'confirmed') this.refresh();
    return verdict;
  }

  /**
   * Every node's answer, or those so far once they are `enough`: a majority confirms, whatever the others say, so a
   * node that does not answer (down, paused) holds up a claim only while the answers so far do not confirm it.
   */
  private askUntil(nodes: NodeLike[], key: string, enough: (views: NodeView[]) => boolean): Promise<Answer[]> {
    return new Promise((resolve) => {
      const answers: Answer[] = [];
      if (nodes.length === 0) resolve(answers);
      for (const node of nodes) {
        void this.ask(node, key).then((answer) => {
          answers.push(answer);
          if (answers.length === nodes.length || enough(viewsOf(answers))) resolve(answers);
        });
      }
    });
  }

  /** A node's view, `refused` when it answers CLUSTER NODES with an error, undefined when it does not answer. */
  private async ask(node: NodeLike, key: string): Promise<Answer> {
    try {
      const [info, nodes, slot] = await withTimeout(
        Promise.all([node.call('INFO', 'server'), node.call('CLUSTER', 'NODES'), node.call('CLUSTER', 'KEYSLOT', key)]),
        this.timeoutMs,
        'CLUSTER NODES',
      );
      return parseView(String(info), String(nodes), Number(slot));
    } catch (error) {
      return isReplyError(error) ? 'refused' : undefined;
    }
  }

  private refresh(): void {
    this.cluster.refreshSlotsCache?.(() => undefined);
  }
}

/** A node's view, `refused` (CLUSTER NODES answered with an error), or undefined (no answer in time). */
type Answer = NodeView | 'refused' | undefined;

function viewsOf(answers: readonly Answer[]): NodeView[] {
  return answers.filter((answer): answer is NodeView => answer !== undefined && answer !== 'refused');
}

/**
 * The verdict on the views so far: confirmed when a majority of the primaries (of the most any view counts) name
 * the node whose `run_id` answered as the slot's primary without flagging it failing, and no primary names another.
 */
function judge(views: readonly NodeView[], runId: string, asked: number): ClusterVerdict {
  const answering = views.find((view) => view.runId === runId);
  const known = Math.max(1, ...views.map((view) => view.primaries));
  const majority = Math.floor(known / 2) + 1;
  if (answering === undefined) {
    return {
      kind: 'unconfirmed',
      detail: `the Redis process that answered (${runId}) is not among the ${views.length} of ${asked} cluster nodes that answered`,
    };
  }
  let confirmations = 0;
  const others = new Set<string>();
  for (const view of views) {
    if (!view.servesSlots) continue;
    if (view.owner?.id === answering.myId && !view.owner.failing) confirmations++;
    else if (view.owner !== undefined && view.owner.id !== answering.myId) others.add(view.owner.id);
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

/** An error reply from Redis (ioredis's ReplyError), as against a timeout or a lost connection. */
function isReplyError(error: unknown): boolean {
  return error instanceof Error && error.name === 'ReplyError';
}

/** A node's `INFO server` and `CLUSTER NODES` read for the primary of `slot`. */
export function parseView(info: string, nodes: string, slot: number): NodeView | undefined {
  const runId = /run_id:(\w+)/.exec(info)?.[1];
  if (runId === undefined) return undefined;
  let myId: string | undefined;
  let servesSlots = false;
  let primaries = 0;
  let owner: NodeView['owner'];
  for (const line of nodes.split('\n')) {
    const fields = line.trim().split(' ');
    if (fields.length < 8) continue;
    const [id, , flagText] = fields;
    const flags = flagText.split(',');
    const ranges = fields.slice(8).filter((range) => !range.startsWith('['));
    const primary = flags.includes('master') && ranges.length > 0;
    if (primary) primaries++;
    if (flags.includes('myself')) {
      myId = id;
      servesSlots = primary;
    }
    if (primary && ranges.some((range) => inRange(range, slot))) {
      owner = { id, failing: flags.includes('fail') || flags.includes('fail?') };
    }
  }
  if (myId === undefined) return undefined;
  return { runId, myId, servesSlots, primaries, owner };
}

function inRange(range: string, slot: number): boolean {
  const [low, high = low] = range.split('-').map(Number);
  return slot >= low && slot <= high;
}

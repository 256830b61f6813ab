/**
 * What the simulated Redis Cluster's nodes answer to the commands of the lease's claim confirmation
 * (lib/lease/redis/cluster.confirm.ts): three primaries with a third of the slots each, the first serving the
 * namespace's slot. Node IDs follow the Redis process (`n-<run_id>`), so a node restarted since a claim is another node.
 */
import type { RedisModel } from './redis-model.js';

/** The slot the namespace's keys hash to: the first primary's. */
const NAMESPACE_SLOT = 100;

/**
 * The reply of `node` (a server that serves or served the namespace's slot, or the other primaries, 1 and 2) to
 * `command`, when `current` serves the slot. An old primary (paused, or just run again) still names itself; another
 * primary that has not yet learnt of a promotion names the primary it replaced (`former`), flagged failing, as the
 * primaries that voted for it do. A promoted node carries a higher configuration epoch (`epochOf`).
 */
export function nodeReply(
  node: RedisModel | number,
  current: RedisModel,
  command: readonly string[],
  former: RedisModel | undefined,
  epochOf: (server: RedisModel) => number,
): unknown {
  const [name, sub] = command;
  if (name === 'INFO') return `# Server\r\nrun_id:${typeof node === 'number' ? `other${node}` : node.runId}\r\n`;
  if (name === 'CLUSTER' && sub === 'KEYSLOT') return NAMESPACE_SLOT;
  if (name === 'CLUSTER' && sub === 'NODES') {
    const owner = typeof node === 'number' ? (former ?? current) : node;
    const failing = typeof node === 'number' && former !== undefined;
    return [
      nodeLine(`n-${owner.runId}`, owner === node, '0-5460', failing, epochOf(owner)),
      nodeLine('n-other1', node === 1, '5461-10922'),
      nodeLine('n-other2', node === 2, '10923-16383'),
    ].join('\n');
  }
  throw new Error(`the simulated cluster node has no answer to ${command.join(' ')}`);
}

function nodeLine(id: string, myself: boolean, slots: string, failing = false, epoch = 1): string {
  const flags = `${myself ? 'myself,' : ''}master${failing ? ',fail' : ''}`;
  return `${id} 127.0.0.1:7000@17000 ${flags} - 0 0 ${epoch} connected ${slots}`;
}

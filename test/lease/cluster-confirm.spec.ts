import { afterEach, describe, expect, it } from '@jest/globals';
import { ClusterConfirm, parseView } from '../../lib/lease/redis/cluster.confirm.js';

/** A CLUSTER NODES line as Redis writes it. */
function line(id: string, flags: string, slots: string, epoch = 1): string {
  return `${id} 127.0.0.1:7000@17000 ${flags} - 0 0 ${epoch} connected ${slots}`.trimEnd();
}

/** Calls to hung nodes, ended after each test (so that no time limit's timer outlives it). */
const hanging: (() => void)[] = [];
afterEach(() => hanging.splice(0).forEach((end) => end()));

/** A node that answers INFO, CLUSTER NODES and CLUSTER KEYSLOT, or fails as told. */
function node(runId: string, nodes: string[], fail?: 'refuse' | 'loading' | 'hang') {
  const keys: string[] = [];
  return {
    keys,
    call(command: string, ...args: string[]): Promise<unknown> {
      if (fail === 'hang') return new Promise((_, reject) => hanging.push(() => reject(new Error('closed'))));
      if (fail === 'loading') {
        return Promise.reject(
          Object.assign(new Error('LOADING Redis is loading the dataset in memory'), { name: 'ReplyError' }),
        );
      }
      if (command === 'CLUSTER' && args[0] === 'NODES' && fail === 'refuse') {
        return Promise.reject(
          Object.assign(new Error("NOPERM this user has no permissions to run 'cluster|nodes'"), {
            name: 'ReplyError',
          }),
        );
      }
      if (command === 'INFO') return Promise.resolve(`# Server\r\nrun_id:${runId}\r\n`);
      if (command === 'CLUSTER' && args[0] === 'KEYSLOT') {
        keys.push(args[1]);
        return Promise.resolve(100);
      }
      return Promise.resolve(nodes.join('\n'));
    },
  };
}

const others = (me?: 'b' | 'c') => [
  line('b', me === 'b' ? 'myself,master' : 'master', '5461-10922'),
  line('c', me === 'c' ? 'myself,master' : 'master', '10923-16383'),
];

function cluster(nodes: ReturnType<typeof node>[], keyPrefix?: string, timeoutMs = 50) {
  return ClusterConfirm.forClient({ isCluster: true, options: { keyPrefix }, nodes: () => nodes }, timeoutMs)!;
}

describe('ClusterConfirm', () => {
  it('is made only for an ioredis Cluster client', () => {
    expect(ClusterConfirm.forClient({ status: 'ready' }, 50)).toBeUndefined();
    expect(ClusterConfirm.forClient(undefined, 50)).toBeUndefined();
  });

  it('confirms the process that a majority of the primaries name as the slot primary, a hung one left out', async () => {
    const a = node('runa', [line('a', 'myself,master', '0-5460'), ...others()]);
    const b = node('runb', [line('a', 'master', '0-5460'), ...others('b')]);
    const hung = node('runc', [], 'hang');
    await expect(cluster([a, b, hung]).confirm('runa:replid', 'k')).resolves.toEqual({
      kind: 'confirmed',
      confirmations: 2,
      of: 3,
    });
    // The process that answered must answer too: hung, it is not among the nodes that answered.
    const aHung = node('runa', [], 'hang');
    const c = node('runc', [line('a', 'master', '0-5460'), ...others('c')]);
    await expect(cluster([aHung, b, c]).confirm('runa:replid', 'k')).resolves.toMatchObject({
      kind: 'unconfirmed',
      detail: expect.stringMatching(/^the Redis process that answered \(runa\) is none of the 2 of 3 cluster nodes/),
    });
    // Every node answered and none is it: a proxy hides the shards, and the message says what to do.
    await expect(cluster([b, c]).confirm('runa', 'k')).resolves.toMatchObject({
      kind: 'unconfirmed',
      detail: expect.stringMatching(/if this persists, .* set redis\.confirmWithCluster: false\)$/),
    });
  });

  // A primary that missed the promoted node's messages and cleared its flag on the old one (or voted for a forced
  // failover without flagging it) names the old primary: with the old one's own view that is a majority, whatever
  // order the answers come in, but the third primary names the promoted node, and every node is waited for.
  it('refuses the old primary when any primary names the promoted one, in whatever order the answers come', async () => {
    const p = node('runp', [line('p', 'myself,master', '0-5460'), ...others()]);
    const missed = node('runb', [line('p', 'master', '0-5460'), ...others('b')]);
    const heard = node('runc', [line('p', 'master', ''), line('r', 'master', '0-5460'), ...others('c')]);
    for (const order of [
      [p, missed, heard],
      [heard, missed, p],
    ]) {
      await expect(cluster(order).confirm('runp', 'k')).resolves.toMatchObject({
        kind: 'unconfirmed',
        detail: expect.stringMatching(/^2 of 3 primaries .*; r named instead$/),
      });
    }
  });

  it('takes no word from an old primary that names itself against the promoted one', async () => {
    const oldSelf = node('runp', [line('p', 'myself,master', '0-5460'), ...others()]);
    const promoted = node('runr', [line('p', 'master,fail', ''), line('r', 'myself,master', '0-5460', 4), ...others()]);
    const b = node('runb', [line('p', 'master,fail', ''), line('r', 'master', '0-5460', 4), ...others('b')]);
    const c = node('runc', [line('p', 'master,fail', '0-5460'), ...others('c')]);
    // c still flags the old primary failing, not yet told of the promotion: no word against it either.
    await expect(cluster([oldSelf, promoted, b, c]).confirm('runr', 'k')).resolves.toEqual({
      kind: 'confirmed',
      confirmations: 2,
      of: 3,
    });
  });

  // A retried election: the voters' flags on the old primary are older than two node timeouts, and a voter that hears
  // from it again clears its flag before the promoted node's message arrives. The promoted node, with the higher
  // epoch, knows first.
  it('takes the promoted node’s word for itself, by its higher epoch, against a majority naming the old one', async () => {
    const p = node('runp', [line('p', 'myself,master', '0-5460'), ...others()]);
    const b = node('runb', [line('p', 'master', '0-5460'), ...others('b')]);
    const c = node('runc', [line('p', 'master,fail', '0-5460'), ...others('c')]);
    const promoted = node('runr', [line('p', 'master', ''), line('r', 'myself,master', '0-5460', 4), ...others()]);
    await expect(cluster([p, b, c, promoted]).confirm('runp', 'k')).resolves.toMatchObject({
      kind: 'unconfirmed',
      detail: expect.stringMatching(/^2 of 3 primaries .*; r named instead$/),
    });
  });

  it('refuses a primary that the others flag failing or replaced, as after a promotion', async () => {
    const oldSelf = [line('a', 'myself,master', '0-5460'), ...others()];
    const failing = (me: 'b' | 'c') => [line('a', 'master,fail', '0-5460'), ...others(me)];
    const verdict = await cluster([
      node('runa', oldSelf),
      node('runb', failing('b')),
      node('runc', failing('c')),
    ]).confirm('runa', 'k');
    expect(verdict).toEqual({
      kind: 'unconfirmed',
      detail: expect.stringMatching(/^1 of 3 primaries name the Redis process that answered \(runa, node a\)/),
    });
    const replaced = (me: 'b' | 'c') => [line('a', 'slave', ''), line('r', 'master', '0-5460'), ...others(me)];
    const afterPromotion = await cluster([
      node('runa', oldSelf),
      node('runb', replaced('b')),
      node('runc', replaced('c')),
    ]).confirm('runa', 'k');
    expect(afterPromotion).toMatchObject({ kind: 'unconfirmed', detail: expect.stringMatching(/; r named instead$/) });
  });

  it('does not count replicas, and one primary naming another owner refuses the claim', async () => {
    const view = (me: string) => [
      line('a', me === 'a' ? 'myself,master' : 'master', '0-5460'),
      line('x', me === 'x' ? 'myself,slave' : 'slave', ''),
      ...others(me === 'b' || me === 'c' ? me : undefined),
    ];
    const stale = [line('a', 'master', ''), line('r', 'master', '0-5460'), ...others('c')];
    const verdict = await cluster([
      node('runa', view('a')),
      node('runx', view('x')),
      node('runb', view('b')),
      node('runc', stale),
    ]).confirm('runa', 'k');
    expect(verdict).toMatchObject({
      kind: 'unconfirmed',
      detail: expect.stringMatching(/^2 of 3 primaries .*; r named instead$/),
    });
  });

  it('says when every node refuses the commands, and asks for the prefixed key’s slot', async () => {
    const refusing = [node('runa', [], 'refuse'), node('runb', [], 'refuse')];
    await expect(cluster(refusing).confirm('runa', 'k')).resolves.toMatchObject({ kind: 'unsupported' });
    // A node that is loading, or one that does not answer, is no refusal: the claim is not confirmed.
    const loading = [node('runa', [], 'hang'), node('runb', [], 'loading')];
    await expect(cluster(loading).confirm('runa', 'k')).resolves.toMatchObject({ kind: 'unconfirmed' });
    // One that refuses, where none gives a view, speaks for the cluster's ACL: nothing to check by.
    const refusedAndHung = [node('runa', [], 'hang'), node('runb', [], 'refuse')];
    await expect(cluster(refusedAndHung).confirm('runa', 'k')).resolves.toMatchObject({ kind: 'unsupported' });
    const a = node('runa', [line('a', 'myself,master', '0-16383')]);
    await expect(cluster([a], 'app:').confirm('runa', 'snowflake:{o:dc0}:meta')).resolves.toMatchObject({
      kind: 'confirmed',
    });
    expect(a.keys).toEqual(['app:snowflake:{o:dc0}:meta']);
  });

  it('reads a migrating slot’s markers as no range, and a view without itself as no view', () => {
    const nodes = [line('a', 'myself,master', '0-99 [100->-b] 101-5460'), ...others()].join('\n');
    expect(parseView('run_id:runa', nodes, 100)).toMatchObject({ myId: 'a', owner: undefined, primaries: 3 });
    expect(parseView('run_id:runa', nodes, 101)).toMatchObject({ owner: { id: 'a', failing: false } });
    expect(parseView('run_id:runa', others().join('\n'), 100)).toBeUndefined();
    expect(parseView('no id here', nodes, 100)).toBeUndefined();
  });
});

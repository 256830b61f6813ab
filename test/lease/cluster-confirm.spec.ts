import { afterEach, describe, expect, it } from '@jest/globals';
import { ClusterConfirm, parseView } from '../../lib/lease/redis/cluster.confirm.js';

/** A CLUSTER NODES line as Redis writes it. */
function line(id: string, flags: string, slots: string): string {
  return `${id} 127.0.0.1:7000@17000 ${flags} - 0 0 1 connected ${slots}`.trimEnd();
}

/** Calls to hung nodes, ended after each test (so that no time limit's timer outlives it). */
const hanging: (() => void)[] = [];
afterEach(() => hanging.splice(0).forEach((end) => end()));

/** A node that answers INFO, CLUSTER NODES and CLUSTER KEYSLOT, or fails as told. */
function node(runId: string, nodes: string[], fail?: 'refuse' | 'hang') {
  const keys: string[] = [];
  return {
    keys,
    call(command: string, ...args: string[]): Promise<unknown> {
      if (fail === 'hang') return new Promise((_, reject) => hanging.push(() => reject(new Error('closed'))));
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
    // A majority's answers are enough: the hung node's time limit (a minute here) is not waited for.
    await expect(cluster([a, b, hung], undefined, 60_000).confirm('runa:replid', 'k')).resolves.toEqual({
      kind: 'confirmed',
      confirmations: 2,
      of: 3,
    });
    // The process that answered must answer too: hung, it is not among the nodes that answered.
    const aHung = node('runa', [], 'hang');
    const c = node('runc', [line('a', 'master', '0-5460'), ...others('c')]);
    await expect(cluster([aHung, b, c]).confirm('runa:replid', 'k')).resolves.toMatchObject({
      kind: 'unconfirmed',
      detail: expect.stringMatching(/^the Redis process that answered \(runa\) is not among the 2 of 3 cluster nodes/),
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

  it('says when every node refuses CLUSTER NODES, and asks for the prefixed key’s slot', async () => {
    const refusing = [node('runa', [], 'refuse'), node('runb', [], 'refuse')];
    await expect(cluster(refusing).confirm('runa', 'k')).resolves.toMatchObject({ kind: 'unsupported' });
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

/**
 * The host lock across PID namespaces (real processes, `unshare`): containers that share a lock directory and a host
 * name (host networking, one `hostname` for several replicas) see the same lock files, but a pid written in one
 * namespace names nothing, or another process, in the other. A holder there is asked through the Unix socket it
 * listens on beside the lock: the second process is refused while the holder runs, and takes over once the holder
 * is gone (the socket then refuses connections). Before the socket, the pid check judged such a holder gone and two
 * processes issued the same IDs.
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { AppProcess, HOST_LOCK_APP as SCRIPT } from './fixtures/host-lock-app-process.js';
import type { SnowflakeModuleOptions } from '../../lib/module/snowflake.options.js';
import { skipVisibly } from '../support/skip-notice.js';
import { tempDirectory } from '../support/temp-dir.js';

const UNSHARE = ['unshare', '--pid', '--fork', '--kill-child', '--mount-proc'];

/** Whether this machine lets a test start a process in a PID namespace of its own (root, or user namespaces). */
function canUnshare(): boolean {
  return spawnSync(UNSHARE[0], [...UNSHARE.slice(1), 'true'], { stdio: 'ignore' }).status === 0;
}

if (!canUnshare()) {
  skipVisibly(
    'host lock across PID namespaces',
    '`unshare --pid --fork --mount-proc` cannot run here',
    'needs util-linux unshare and the right to create PID and mount namespaces (root, or unprivileged user namespaces)',
  );
} else {
  // Directly under /tmp: a socket path must fit in 108 bytes, which the test run's own temp directories can exceed.
  const temp = tempDirectory('snowflake-ns-', '/tmp');
  const apps: AppProcess[] = [];
  let runs = 0;

  afterAll(async () => {
    await Promise.all(apps.map((app) => app.kill()));
    temp.remove();
  });

  function start(options: SnowflakeModuleOptions, ownNamespace: boolean): AppProcess {
    const command = [...(ownNamespace ? UNSHARE : []), process.execPath, SCRIPT, JSON.stringify(options)];
    const child = spawn(command[0], command.slice(1), {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, NODE_OPTIONS: '' },
    });
    const app = new AppProcess(child);
    apps.push(app);
    return app;
  }

  describe('host lock: a fixed worker ID in two PID namespaces of one host', () => {
    it.each([
      ['a process of its own PID namespace is refused while the holder runs here', false, true],
      ['a process here is refused while the holder runs in a PID namespace of its own', true, false],
    ])(
      '%s, and takes over once the holder is killed',
      async (_, holderOwnNamespace, otherOwnNamespace) => {
        const workerLock = { dir: temp.path(`locks-${++runs}`) };
        const holder = start({ workerId: 7, workerLock }, holderOwnNamespace);
        expect(await holder.first).toMatchObject({ event: 'ready', workerId: 7 });
        const lock = JSON.parse(readFileSync(`${workerLock.dir}/worker-0-7.lock`, 'utf8')) as {
          token: string;
          holder: { pidNamespace?: string; beacon?: boolean };
        };
        expect(lock.holder.beacon).toBe(true);
        expect(readdirSync(workerLock.dir)).toContain(`worker-0-7.lock.${lock.token.slice(0, 8)}.sock`);

        const refused = await start({ workerId: 7, workerLock }, otherOwnNamespace).first;
        expect(refused).toMatchObject({ event: 'error', name: 'WorkerIdInUseError' });
        expect(refused.message).toMatch(/another PID namespace/);

        await holder.kill();
        const next = start({ workerId: 7, workerLock }, otherOwnNamespace);
        expect(await next.first).toMatchObject({ event: 'ready', workerId: 7 });
        await next.kill();
      },
      60_000,
    );

    it('a graceful stop leaves neither the lock nor its socket behind; a killed holder’s are cleared by the next', async () => {
      const workerLock = { dir: temp.path(`locks-${++runs}`) };
      const closed = start({ workerId: 9, workerLock }, false);
      expect(await closed.first).toMatchObject({ event: 'ready' });
      expect(readdirSync(workerLock.dir).sort()).toEqual([
        'worker-0-9.lock',
        expect.stringMatching(/^worker-0-9\.lock\.[0-9a-f]{8}\.sock$/),
      ]);
      await closed.close();
      expect(readdirSync(workerLock.dir)).toEqual([]);

      const killed = start({ workerId: 9, workerLock }, true);
      expect(await killed.first).toMatchObject({ event: 'ready' });
      await killed.kill();
      expect(readdirSync(workerLock.dir)).toHaveLength(2);
      const next = start({ workerId: 9, workerLock }, false);
      expect(await next.first).toMatchObject({ event: 'ready' });
      await next.close();
      expect(readdirSync(workerLock.dir)).toEqual([]);
    }, 60_000);

    it('a process that reads another boot ID (another machine of the same host name) never takes a live lock over', async () => {
      const workerLock = { dir: temp.path(`locks-${++runs}`) };
      const holder = start({ workerId: 10, workerLock }, false);
      expect(await holder.first).toMatchObject({ event: 'ready' });
      // A mount namespace whose boot_id reads another value: to the lock, a machine that booted on its own.
      const bootId = temp.path(`boot-id-${runs}`);
      const script =
        `cat /proc/sys/kernel/random/uuid > ${bootId} && mount --bind ${bootId} /proc/sys/kernel/random/boot_id && ` +
        `exec "$0" "$@"`;
      const child = spawn(
        'unshare',
        ['--mount', 'sh', '-c', script, process.execPath, SCRIPT, JSON.stringify({ workerId: 10, workerLock })],
        { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, NODE_OPTIONS: '' } },
      );
      const elsewhere = new AppProcess(child);
      apps.push(elsewhere);
      const refused = await elsewhere.first;
      expect(refused).toMatchObject({ event: 'error', name: 'WorkerIdInUseError' });
      expect(refused.message).toMatch(/another machine with the same host name/);
      await holder.close();
    }, 60_000);

    it.each([
      ['mounted at another path in each container', true],
      ['at a path too long for a socket address', false],
    ])(
      'a lock directory %s: refused while the holder runs, taken over once it is killed',
      async (_, mounted) => {
        const shared = temp.path(`locks-${++runs}${mounted ? '' : `-${'long-'.repeat(20)}`}`);
        mkdirSync(shared, { recursive: true });
        // The holder sees the directory as /mnt/…; this test, and the process after it, at its own path.
        const seenAs = mounted ? `/mnt/snowflake-lock-test-${process.pid}-${runs}` : shared;
        const options = JSON.stringify({ workerId: 11, workerLock: { dir: seenAs } });
        const bind = mounted ? `mkdir -p ${seenAs} && mount --bind ${shared} ${seenAs} && ` : '';
        const holderChild = spawn(
          'unshare',
          [...UNSHARE.slice(1), 'sh', '-c', `${bind}exec "$0" "$@"`, process.execPath, SCRIPT, options],
          { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, NODE_OPTIONS: '' } },
        );
        const holder = new AppProcess(holderChild);
        apps.push(holder);
        expect(await holder.first).toMatchObject({ event: 'ready', workerId: 11 });
        const workerLock = { dir: shared };
        expect(await start({ workerId: 11, workerLock }, false).first).toMatchObject({ name: 'WorkerIdInUseError' });
        await holder.kill();
        const next = start({ workerId: 11, workerLock }, false);
        expect(await next.first).toMatchObject({ event: 'ready', workerId: 11 });
        await next.close();
        if (mounted) rmSync(seenAs, { recursive: true, force: true });
      },
      60_000,
    );

    it('reads no path from a lock file: a lock of another PID namespace with a file in place of its socket is held', async () => {
      const dir = temp.path(`locks-${++runs}`);
      mkdirSync(dir, { recursive: true });
      const token = randomUUID();
      const lockFile = `${dir}/worker-0-12.lock`;
      // What a forged lock could name: a file that is not a socket, at the derived path and at a path of its own.
      const victim = temp.path(`victim-${runs}`);
      writeFileSync(victim, 'keep');
      writeFileSync(`${lockFile}.${token.slice(0, 8)}.sock`, 'not a socket');
      const holder = { pid: 1, threadId: 0, hostname: hostname(), startedAt: new Date().toISOString() };
      writeFileSync(
        lockFile,
        JSON.stringify({
          format: 'nestjs-snowflake/host-lock',
          version: 1,
          token,
          holder: {
            ...holder,
            bootId: readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim(),
            pidNamespace: 'pid:[1]',
            beacon: victim,
          },
          subject: {},
        }),
      );
      expect(await start({ workerId: 12, workerLock: { dir } }, false).first).toMatchObject({
        name: 'WorkerIdInUseError',
      });
      expect(readFileSync(victim, 'utf8')).toBe('keep');
      expect(readFileSync(`${lockFile}.${token.slice(0, 8)}.sock`, 'utf8')).toBe('not a socket');
    }, 60_000);

    it('a ceiling file shared across PID namespaces is refused to the second process', async () => {
      const ceilingFile = temp.path(`ceiling-${++runs}.json`);
      const options = (dir: string): SnowflakeModuleOptions => ({
        workerId: 8,
        workerLock: { dir: temp.path(dir) },
        ceilingFile: { path: ceilingFile, ifMissing: 'create' },
      });
      const holder = start(options(`locks-${runs}-a`), false);
      expect(await holder.first).toMatchObject({ event: 'ready', workerId: 8 });
      const refused = await start(options(`locks-${runs}-b`), true).first;
      expect(refused).toMatchObject({ event: 'error', name: 'CeilingFileError', problem: 'in-use' });
      expect(refused.message).toMatch(/another PID namespace/);
      await holder.kill();
    }, 60_000);
  });
}

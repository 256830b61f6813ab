/**
 * One holder per fixed worker ID per host, across real processes and worker threads (nothing of the lock is faked):
 * a second process or thread on the worker ID of a running one (a number, or a StatefulSet host name) fails to boot
 * with WorkerIdInUseError naming the holder, instead of issuing the same IDs; once the holder is gone (closed,
 * killed with SIGKILL, its thread terminated) the next one starts, and of several racing for a dead holder's lock
 * exactly one wins. A ceiling file is locked too: a second process on it is refused.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { AppProcess, HOST_LOCK_APP as SCRIPT, type AppEvent } from './fixtures/host-lock-app-process.js';
import type { SnowflakeModuleOptions } from '../../lib/module/snowflake.options.js';
import { tempDirectory } from '../support/temp-dir.js';

const temp = tempDirectory('snowflake-host-lock-');
let runs = 0;

const running: AppProcess[] = [];
const threads: Worker[] = [];

afterAll(async () => {
  await Promise.all(running.map((app) => app.kill()));
  await Promise.all(threads.map((thread) => thread.terminate()));
  temp.remove();
});

/** A lock directory of the test's own, so that the test meets only its own apps. */
function lockDir(): string {
  return temp.path(`locks-${++runs}`);
}

function startProcess(options: SnowflakeModuleOptions): AppProcess {
  const child = spawn(process.execPath, [SCRIPT, JSON.stringify(options)], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  const app = new AppProcess(child);
  running.push(app);
  return app;
}

function startThread(options: SnowflakeModuleOptions): { worker: Worker; first: Promise<AppEvent> } {
  const worker = new Worker(SCRIPT, { workerData: options });
  threads.push(worker);
  const first = new Promise<AppEvent>((resolve, reject) => {
    worker.once('message', (event: AppEvent) => resolve(event));
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`thread exited (${code}) before an event`)));
  });
  return { worker, first };
}

const exitOf = (worker: Worker) => new Promise((resolve) => worker.once('exit', resolve));

describe('host lock: a fixed worker ID in two processes of one host', () => {
  it('refuses the second process, naming the holder and the fix; after a graceful stop the next one starts', async () => {
    const workerLock = { dir: lockDir() };
    const first = startProcess({ workerId: 3, workerLock });
    expect(await first.first).toMatchObject({ event: 'ready', workerId: 3 });

    const second = startProcess({ workerId: 3, workerLock });
    const refused = await second.first;
    expect(refused).toMatchObject({
      event: 'error',
      name: 'WorkerIdInUseError',
      holder: { pid: first.pid, threadId: 0 },
    });
    expect(refused.message).toContain(`process ${first.pid}`);
    expect(refused.message).toMatch(/Give each process its own worker ID/);
    expect(refused.message).toMatch(/Redis lease/);
    expect(refused.message).toMatch(/workerLock\.dir/);
    expect(await second.exited).toBe(2);

    await first.close();
    expect(existsSync(refused.holder!.lockFile)).toBe(false);
    const third = startProcess({ workerId: 3, workerLock });
    expect(await third.first).toMatchObject({ event: 'ready', workerId: 3 });
    await third.close();
  }, 60_000);

  it('after the holder is killed with SIGKILL, its lock file stays, and the next process takes it over', async () => {
    const workerLock = { dir: lockDir() };
    const first = startProcess({ workerId: 5, workerLock });
    expect(await first.first).toMatchObject({ event: 'ready' });
    await first.kill();
    const lockFile = `${workerLock.dir}/worker-0-5.lock`;
    expect(JSON.parse(readFileSync(lockFile, 'utf8'))).toMatchObject({ holder: { pid: first.pid } });

    const next = startProcess({ workerId: 5, workerLock });
    const ready = await next.first;
    expect(ready).toMatchObject({ event: 'ready', workerId: 5 });
    expect(JSON.parse(readFileSync(lockFile, 'utf8'))).toMatchObject({ holder: { pid: next.pid } });
    await next.close();
  }, 60_000);

  it('of four processes racing to take over a dead holder’s lock, exactly one starts', async () => {
    const workerLock = { dir: lockDir() };
    const dead = startProcess({ workerId: 6, workerLock });
    expect(await dead.first).toMatchObject({ event: 'ready' });
    await dead.kill();

    const racers = [1, 2, 3, 4].map(() => startProcess({ workerId: 6, workerLock }));
    const events = await Promise.all(racers.map((racer) => racer.first));
    const ready = events.filter((event) => event.event === 'ready');
    const refused = events.filter((event) => event.event === 'error');
    expect(ready).toHaveLength(1);
    expect(refused).toHaveLength(3);
    for (const event of refused) {
      expect(event).toMatchObject({ name: 'WorkerIdInUseError', holder: { pid: ready[0].pid } });
    }
    await Promise.all(racers.map((racer) => racer.close()));
  }, 60_000);

  it("guards workerId: 'hostname' the same way, and a host name and a number naming one worker ID meet", async () => {
    const workerLock = { dir: lockDir() };
    const layout = 'twitter';
    const first = startProcess({ layout, workerId: 'hostname', hostname: 'api-4', workerLock });
    expect(await first.first).toMatchObject({ event: 'ready', workerId: 4 });
    const sameHostName = startProcess({ layout, workerId: 'hostname', hostname: 'api-4', workerLock });
    expect(await sameHostName.first).toMatchObject({ event: 'error', name: 'WorkerIdInUseError' });
    const sameNumber = startProcess({ layout, workerId: 4, workerLock });
    expect(await sameNumber.first).toMatchObject({ event: 'error', name: 'WorkerIdInUseError' });
    const otherDatacenter = startProcess({
      layout,
      workerId: 'hostname',
      hostname: 'api-4',
      datacenterId: 1,
      workerLock,
    });
    expect(await otherDatacenter.first).toMatchObject({ event: 'ready', workerId: 4 });
    await Promise.all([first.close(), otherDatacenter.close()]);
  }, 60_000);

  it('lets the processes through with workerLock: false, or with a lock directory each', async () => {
    const off = [startProcess({ workerId: 7, workerLock: false }), startProcess({ workerId: 7, workerLock: false })];
    const apart = [startProcess({ workerId: 7, workerLock: { dir: lockDir() } })];
    apart.push(startProcess({ workerId: 7, workerLock: { dir: lockDir() } }));
    for (const app of [...off, ...apart]) expect(await app.first).toMatchObject({ event: 'ready' });
    await Promise.all([...off, ...apart].map((app) => app.close()));
  }, 60_000);
});

describe('host lock: a fixed worker ID in two worker threads of one process', () => {
  it('refuses the second thread; a thread that exits releases it', async () => {
    const workerLock = { dir: lockDir() };
    const first = startThread({ workerId: 8, workerLock });
    const ready = await first.first;
    expect(ready).toMatchObject({ event: 'ready', workerId: 8, pid: process.pid });

    const second = startThread({ workerId: 8, workerLock });
    expect(await second.first).toMatchObject({
      event: 'error',
      name: 'WorkerIdInUseError',
      holder: { pid: process.pid, threadId: ready.threadId },
    });

    // process.exit() in the thread, with the app not closed: the exit handler removes the lock.
    const gone = exitOf(first.worker);
    first.worker.postMessage('exit');
    await gone;
    const third = startThread({ workerId: 8, workerLock });
    expect(await third.first).toMatchObject({ event: 'ready', workerId: 8 });
    const closed = exitOf(third.worker);
    third.worker.postMessage('close');
    await closed;
  }, 60_000);

  const linux = existsSync('/proc/thread-self') ? it : it.skip;
  linux(
    'a thread terminated without cleanup is seen gone (Linux /proc), and the next thread starts',
    async () => {
      const workerLock = { dir: lockDir() };
      const first = startThread({ workerId: 9, workerLock });
      expect(await first.first).toMatchObject({ event: 'ready' });
      await first.worker.terminate();
      expect(existsSync(`${workerLock.dir}/worker-0-9.lock`)).toBe(true);
      const next = startThread({ workerId: 9, workerLock });
      expect(await next.first).toMatchObject({ event: 'ready', workerId: 9 });
      const closed = exitOf(next.worker);
      next.worker.postMessage('close');
      await closed;
    },
    60_000,
  );
});

describe('host lock: a ceiling file', () => {
  it('refuses a second process on the same ceiling file, whatever its worker ID', async () => {
    const path = temp.path(`ceiling-${++runs}.json`);
    const workerLock = { dir: lockDir() };
    const first = startProcess({ workerId: 3, workerLock, ceilingFile: { path, ifMissing: 'create' } });
    expect(await first.first).toMatchObject({ event: 'ready' });

    const otherWorker = startProcess({ workerId: 4, workerLock, ceilingFile: { path, ifMissing: 'create' } });
    const refused = await otherWorker.first;
    expect(refused).toMatchObject({ event: 'error', name: 'CeilingFileError', problem: 'in-use' });
    expect(refused.message).toContain(`process ${first.pid}`);
    expect(refused.message).toMatch(/a file of its own/);
    // Without the worker-ID lock the ceiling file's own lock still refuses the same worker ID.
    const unguarded = startProcess({ workerId: 3, workerLock: false, ceilingFile: path });
    expect(await unguarded.first).toMatchObject({ event: 'error', name: 'CeilingFileError', problem: 'in-use' });

    await first.kill();
    const next = startProcess({ workerId: 3, workerLock, ceilingFile: path });
    expect(await next.first).toMatchObject({ event: 'ready', workerId: 3 });
    await next.close();
    expect(existsSync(`${path}.lock`)).toBe(false);
  }, 60_000);

  it("refuses a missing file unless ifMissing: 'create', naming the option", async () => {
    const path = temp.path(`missing-${++runs}.json`);
    const refused = startProcess({ workerId: 3, workerLock: { dir: lockDir() }, ceilingFile: path });
    const event = await refused.first;
    expect(event).toMatchObject({ event: 'error', name: 'CeilingFileError', problem: 'missing' });
    expect(event.message).toContain(path);
    expect(event.message).toContain("ifMissing: 'create'");
    expect(existsSync(path)).toBe(false);
    expect(existsSync(`${path}.lock`)).toBe(false);

    const created = startProcess({
      workerId: 3,
      workerLock: { dir: lockDir() },
      ceilingFile: { path, ifMissing: 'create' },
    });
    expect(await created.first).toMatchObject({ event: 'ready' });
    await created.close();
    expect(existsSync(path)).toBe(true);
  }, 60_000);
});

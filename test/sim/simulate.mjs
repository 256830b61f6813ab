#!/usr/bin/env node
// `npm run simulate -- --seconds 60 [--seed N] [--schedules N] [--rollbacks] [--without kind,kind]`: the lease simulator's search on a
// time budget, run by jest (which compiles the TypeScript; the simulator drives the real lease on its own simulated
// timers). Exits 1 on a violation, after printing the seed, the shrunk schedule and its timeline.
import { spawnSync } from 'node:child_process';

const args = process.argv.slice(2);
const env = { ...process.env, NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --experimental-vm-modules`.trim() };
const names = {
  '--seconds': 'SIM_SECONDS',
  '--seed': 'SIM_SEED',
  '--schedules': 'SIM_SCHEDULES',
  '--without': 'SIM_WITHOUT',
};
env.SIM_SECONDS ??= '60';
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--rollbacks') env.SIM_ROLLBACKS = '1';
  else if (names[args[i]] !== undefined && args[i + 1] !== undefined) env[names[args[i++]]] = args[i];
  else {
    process.stderr.write(
      `unknown argument ${args[i]}; use --seconds N --seed N --schedules N --rollbacks --without kind,kind\n`,
    );
    process.exit(2);
  }
}
const result = spawnSync('npx', ['jest', '--runTestsByPath', 'test/sim/simulator.spec.ts'], { env, stdio: 'inherit' });
process.exit(result.status ?? 1);

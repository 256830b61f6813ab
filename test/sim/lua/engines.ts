/**
 * The engine the simulator's Redis model runs its scripts with: compiled to JavaScript (the default), or fengari
 * (`SIM_LUA=fengari`), the Lua VM the compiled scripts are checked against. One of each per process: an engine keeps
 * its compiled scripts, and a script runs to its end before another starts.
 */
import type { ScriptEngine } from '../redis-reply.js';
import { CompiledEngine } from './compiled-engine.js';
import { FengariEngine } from './fengari-engine.js';

export type EngineName = 'compiled' | 'fengari';

const engines = new Map<EngineName, ScriptEngine>();

export function scriptEngine(name: EngineName = defaultEngine()): ScriptEngine {
  let engine = engines.get(name);
  if (engine === undefined) {
    engine = name === 'fengari' ? new FengariEngine() : new CompiledEngine();
    engines.set(name, engine);
  }
  return engine;
}

function defaultEngine(): EngineName {
  const chosen = process.env.SIM_LUA ?? 'compiled';
  if (chosen !== 'compiled' && chosen !== 'fengari') {
    throw new Error(`SIM_LUA=${chosen}: use compiled (the default) or fengari`);
  }
  return chosen;
}

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  PHASE_TRANSITIONS,
  phaseDiagram,
  transition,
  type LeasePhase,
  type PhaseName,
} from '../../lib/lease/lease.phase.js';

const PHASES = Object.keys(PHASE_TRANSITIONS) as PhaseName[];
const README = readFileSync(fileURLToPath(new URL('../../README.md', import.meta.url)), 'utf8');

/** A phase value of `name` (the lease a held phase carries does not matter to the table). */
const phase = (name: PhaseName): LeasePhase =>
  name === 'held' ? ({ name, lease: {} } as LeasePhase) : name === 'settling' ? { name, untilMono: 0 } : { name };

describe('the lease phase machine as a table', () => {
  const pairs = PHASES.flatMap((from) => PHASES.map((to) => [from, to] as const));

  it.each(pairs)('%s → %s is allowed exactly when the table lists it', (from, to) => {
    const listed = PHASE_TRANSITIONS[from][to] !== undefined;
    const move = () => transition(phase(from), phase(to));
    if (listed) expect(move()).toEqual(phase(to));
    else expect(move).toThrow(`lease phase ${from} → ${to} is not an allowed transition`);
  });

  it('lets every phase but released be stopped, and nothing leave released', () => {
    for (const from of PHASES.filter((name) => name !== 'released')) {
      expect(PHASE_TRANSITIONS[from].released).toBe('stop');
    }
    expect(PHASE_TRANSITIONS.released).toEqual({});
  });

  it("is drawn in the README's architecture section exactly as the table says", () => {
    expect(README).toContain(['```mermaid', phaseDiagram(), '```'].join('\n'));
  });
});

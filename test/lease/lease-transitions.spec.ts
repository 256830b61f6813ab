import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  PHASE_TRANSITIONS,
  phaseDiagram,
  transition,
  type LeasePhase,
  type PhaseName,
} from '../../lib/lease/lease.phase.js';

const PHASES = Object.keys(PHASE_TRANSITIONS) as PhaseName[];
const read = (path: string) => readFileSync(fileURLToPath(new URL(`../../${path}`, import.meta.url)), 'utf8');
const ARCHITECTURE = read('ARCHITECTURE.md');
/** Every page that could draw the phases: a diagram anywhere in them must be the generated one. */
const PAGES = [
  'README.md',
  'ARCHITECTURE.md',
  'CONTRIBUTING.md',
  ...readdirSync(fileURLToPath(new URL('../../docs', import.meta.url)))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

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

  it('is drawn in ARCHITECTURE.md exactly as the table says', () => {
    expect(ARCHITECTURE).toContain(['```mermaid', phaseDiagram(), '```'].join('\n'));
  });

  it('is drawn nowhere in the docs otherwise', () => {
    const drawn = PAGES.flatMap((page) =>
      [...read(page).matchAll(/```mermaid\n(stateDiagram[\s\S]*?)\n```/g)].map((match) => ({
        page,
        diagram: match[1],
      })),
    );
    expect(drawn.length).toBeGreaterThan(0);
    expect(drawn.filter(({ diagram }) => diagram !== phaseDiagram()).map(({ page }) => page)).toEqual([]);
  });

  it("is listed in ARCHITECTURE.md's transition table, every move with its reason", () => {
    const rows = [...ARCHITECTURE.matchAll(/^\| `(\w+)` +\| `(\w+)` +\| ([^|]+?) +\|$/gm)].map(([, from, to, why]) => ({
      from,
      to,
      why,
    }));
    const table = PHASES.flatMap((from) =>
      Object.entries(PHASE_TRANSITIONS[from]).map(([to, why]) => ({ from, to, why })),
    );
    expect(rows).toEqual(table);
  });
});

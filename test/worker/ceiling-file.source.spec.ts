/**
 * The ceiling file's source with the binding and the generator on a fake wall clock (real timers and a real file):
 * what the file holds must stay at or above every timestamp issued, whatever the wall clock does between raises.
 */
import type { LoggerService } from '@nestjs/common';
import { readFileSync } from 'node:fs';
import { SnowflakeCodec } from '../../lib/core/codec.js';
import { SnowflakeGenerator } from '../../lib/core/generator.js';
import { resolveLayout } from '../../lib/core/layout.js';
import { ticksAtMs } from '../../lib/core/time-units.js';
import { CeilingFileWorkerSource } from '../../lib/worker/ceiling-file.source.js';
import { WorkerBinding } from '../../lib/worker/worker-binding.js';
import { FakeClock } from '../support/fake-clock.js';
import { tempDirectory } from '../support/temp-dir.js';

const START = Date.UTC(2026, 10, 24, 21);
const layout = resolveLayout({ workerBits: 4, datacenterBits: 0 }, START);
const codec = new SnowflakeCodec(layout);
const quiet: LoggerService = { log() {}, error() {}, warn() {}, debug() {}, verbose() {} };
/** Short, so that the timer's raise comes a few real milliseconds after the start (the module asks for 100 at least). */
const STEP_MS = 20;

describe('ceilingFile: the recorded ceiling never goes down while the worker runs', () => {
  const temp = tempDirectory('snowflake-ceiling-source-');
  afterAll(() => temp.remove());

  it('a background raise after the wall clock stepped back keeps the ceiling IDs may still use', async () => {
    const file = temp.path('worker-3.json');
    const clock = new FakeClock(START);
    const generator = new SnowflakeGenerator({ layout, clock });
    const source = new CeilingFileWorkerSource('static', 3, 0, {
      path: file,
      stepMs: STEP_MS,
      maxWaitMs: 1_000,
      ifMissing: 'create',
    });
    const binding = new WorkerBinding(generator, source, layout, clock, quiet, false);
    const recorded = () => (JSON.parse(readFileSync(file, 'utf8')) as { ceilingTicks: number }).ceilingTicks;
    await binding.start();
    try {
      const written = recorded();
      expect(written).toBe(ticksAtMs(layout, START) + STEP_MS);
      // The wall clock steps back (NTP) before the timer's raise, due half a step before the ceiling, comes.
      clock.back(15);
      const deadline = performance.now() + 5_000;
      while (source.raises.background === 0 && performance.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
      expect(source.raises.background).toBe(1);
      // The clock comes back; the permit still allows the ceiling written at start, so an ID may use it.
      clock.set(START + 10);
      const id = generator.next();
      expect(codec.decode(id)).toMatchObject({ workerId: 3, timestamp: START + 10 });
      // After a crash here, the next start would issue above the file's ceiling: it must cover that ID.
      expect(recorded()).toBeGreaterThanOrEqual(ticksAtMs(layout, START + 10));
      expect(recorded()).toBeGreaterThanOrEqual(written);
    } finally {
      await binding.stop();
    }
  });
});

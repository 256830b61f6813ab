import type { LoggerService } from '@nestjs/common';
import { SnowflakeCodec } from '../core/codec.js';
import { ClockMovedBackError, WorkerUnavailableError } from '../core/errors.js';
import { SnowflakeGenerator } from '../core/generator.js';
import type { Layout } from '../core/layout.js';
import { WorkerBinding } from '../worker/worker-binding.js';
import type { WorkerIdSource } from '../worker/worker-source.js';
import { ManualClock } from './manual-clock.js';

const quiet: LoggerService = { log: () => undefined, warn: () => undefined, error: () => undefined };

/** One ID as a host issued it. */
export interface IssuedId {
  id: bigint;
  host: string;
  workerId: number;
  timestampMs: number;
}

/**
 * One simulated process of the conformance suite: a generator bound to a worker-ID source, with a clock of its own
 * that a case can step, issuing IDs on a timer and recording each one.
 */
export class SourceHost {
  readonly clock: ManualClock;
  readonly issued: IssuedId[] = [];
  readonly generator: SnowflakeGenerator;
  private readonly binding: WorkerBinding;
  private readonly codec: SnowflakeCodec;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    readonly name: string,
    readonly source: WorkerIdSource,
    layout: Layout,
    clock: ManualClock,
    clockBackToleranceMs: number,
  ) {
    this.clock = clock;
    this.codec = new SnowflakeCodec(layout);
    this.generator = new SnowflakeGenerator({ layout, clock, clockBackToleranceMs });
    // Each host plays a process of its own: the in-process guard against two generators on one worker ID is off.
    this.binding = new WorkerBinding(this.generator, source, layout, clock, quiet, false);
  }

  start(): Promise<void> {
    return this.binding.start();
  }

  /** Issues one ID now; undefined when the source refuses (WorkerUnavailableError) or the clock is out of bounds. */
  issue(): IssuedId | undefined {
    try {
      const id = this.generator.next();
      const parts = this.codec.decode(id);
      const entry = { id, host: this.name, workerId: parts.workerId, timestampMs: parts.timestamp };
      this.issued.push(entry);
      return entry;
    } catch (error) {
      const translated = this.binding.translate(error);
      if (translated instanceof WorkerUnavailableError || translated instanceof ClockMovedBackError) {
        return undefined;
      }
      throw translated;
    }
  }

  /** Issues an ID every `everyMs` until {@link stopIssuing}. */
  issueContinuously(everyMs = 2): void {
    this.stopIssuing();
    this.timer = setInterval(() => {
      for (let i = 0; i < 5; i++) this.issue();
    }, everyMs);
  }

  stopIssuing(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  get workerId(): number {
    return this.generator.workerId;
  }

  async stop(): Promise<void> {
    this.stopIssuing();
    await this.binding.stop();
  }
}

import type { LoggerService } from '@nestjs/common';
import { WorkerUnavailableError, type SnowflakeError } from '../core/errors.js';

/**
 * What the exception filter logs while it answers 503s: each kind of outage once, when it starts (with the error's
 * own message), then one summary with counts per interval while 503s go on, and one line when an interval passes
 * without any. A Redis blip that refuses 200 requests on every instance gives a few lines, not 200.
 */
export class OutageLog {
  private readonly counts = new Map<string, number>();
  private readonly seen = new Set<string>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly logger: LoggerService,
    private readonly intervalMs = 10_000,
    /** What clients were answered, in the log lines: the HTTP status, or a GraphQL error code. */
    private readonly answer = '503',
  ) {}

  record(error: SnowflakeError): void {
    const kind = error instanceof WorkerUnavailableError ? `${error.name} (${error.reason})` : error.name;
    this.counts.set(kind, (this.counts.get(kind) ?? 0) + 1);
    if (!this.seen.has(kind)) {
      this.seen.add(kind);
      this.logger.warn(
        `Answered ${this.answer}: ${error.name}: ${error.message} (further ${this.answer}s are summed up every ${this.intervalMs / 1000} s)`,
      );
    }
    if (this.timer === undefined) {
      this.timer = setInterval(() => this.summarise(), this.intervalMs);
      this.timer.unref();
    }
  }

  private summarise(): void {
    const total = [...this.counts.values()].reduce((sum, n) => sum + n, 0);
    if (total === 0) {
      clearInterval(this.timer);
      this.timer = undefined;
      this.seen.clear();
      this.logger.log(
        `No request answered ${this.answer} in the last ${this.intervalMs / 1000} s: IDs are issued again`,
      );
      return;
    }
    const byKind = [...this.counts].map(([kind, n]) => `${kind}: ${n}`).join(', ');
    this.logger.warn(`${total} requests answered ${this.answer} in the last ${this.intervalMs / 1000} s (${byKind})`);
    this.counts.clear();
  }
}

import { SnowflakeConfigError } from '../core/errors.js';
import type { WorkerAssignment, WorkerIdSource, WorkerSourceContext } from './worker-source.js';

/**
 * A fixed worker ID: from options, or from the host name's trailing number.
 */
export class StaticWorkerSource implements WorkerIdSource {
  constructor(
    readonly kind: 'static' | 'hostname',
    private readonly workerId: number,
    private readonly datacenterId: number,
  ) {}

  start(context: WorkerSourceContext): Promise<WorkerAssignment> {
    context.logger.log(`Using ${this.kind} worker ID ${this.workerId} (datacenter ${this.datacenterId})`);
    return Promise.resolve({ workerId: this.workerId, datacenterId: this.datacenterId, floor: -1 });
  }

  stop(): Promise<void> {
    return Promise.resolve();
  }

  requestSwitch(): boolean {
    return false;
  }

  whenReady(): Promise<void> {
    return Promise.resolve();
  }

  leaseStatus(): undefined {
    return undefined;
  }
}

const TRAILING_NUMBER = /(\d+)$/;

/**
 * The worker ID from a host name's trailing number: a Kubernetes StatefulSet pod `api-3` is worker 3.
 *
 * @throws SnowflakeConfigError when the name has no trailing number
 * @publicApi
 */
export function workerIdFromHostname(hostname: string): number {
  const match = TRAILING_NUMBER.exec(hostname);
  if (match === null) {
    throw new SnowflakeConfigError(
      'workerId',
      `'hostname' needs a host name ending in a number (a StatefulSet pod such as "api-3"), got ${JSON.stringify(hostname)}. ` +
        'Run as a StatefulSet, set `workerId` to a number, or use a Redis lease (`redis`).',
    );
  }
  return Number(match[1]);
}

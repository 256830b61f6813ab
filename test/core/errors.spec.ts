import {
  ClockMovedBackError,
  SequenceExhaustedError,
  SnowflakeConfigError,
  SnowflakeError,
  TransientSnowflakeError,
  WorkerUnavailableError,
  type WorkerUnavailableReason,
} from '../../lib/core/errors.js';
import {
  ClockOutOfSyncError,
  LeaseConfigMismatchError,
  LeaseLayoutChangeError,
  LeaseExhaustedError,
  RedisUnavailableError,
} from '../../lib/lease/lease.errors.js';

const REASONS: WorkerUnavailableReason[] = [
  'not-started',
  'fenced',
  'lost',
  'switching',
  'stopped',
  'ceiling',
  'clock',
  'settling',
];

describe('WorkerUnavailableError', () => {
  it.each(REASONS)('builds its message from the reason %s: what happened, then what to do', (reason) => {
    const plain = new WorkerUnavailableError(reason);
    const detailed = new WorkerUnavailableError(reason, 'worker ID 3');
    expect(plain.reason).toBe(reason);
    expect(plain.message).toMatch(/^[A-Z].+\. .+[.)]$/);
    expect(detailed.message).toContain('(worker ID 3)');
    expect(detailed.message.replace(' (worker ID 3)', '')).toBe(plain.message);
  });

  it('says something different for each reason', () => {
    const messages = new Set(REASONS.map((reason) => new WorkerUnavailableError(reason).message));
    expect(messages.size).toBe(REASONS.length);
  });
});

describe('TransientSnowflakeError', () => {
  it('marks the errors that pass by themselves, and only those', () => {
    const transient = [
      new WorkerUnavailableError('fenced'),
      new SequenceExhaustedError(3, 1),
      new ClockMovedBackError(2000, 1000),
      new RedisUnavailableError('ns', 3, 'ECONNREFUSED'),
      new LeaseExhaustedError('ns', 16, 16),
    ];
    const lasting = [
      new SnowflakeConfigError('workerId', 'bad'),
      new LeaseConfigMismatchError('ns', 'a', 'b', 1),
      new LeaseLayoutChangeError('ns', 'a', 'b', 60_000),
      new ClockOutOfSyncError('ns', 5000, 1, 100),
    ];
    for (const error of transient) expect(error).toBeInstanceOf(TransientSnowflakeError);
    for (const error of lasting) {
      expect(error).toBeInstanceOf(SnowflakeError);
      expect(error).not.toBeInstanceOf(TransientSnowflakeError);
    }
  });
});

describe('LeaseConfigMismatchError', () => {
  it('counts the IDs held back after a data loss beside the live leases, and only when there are some', () => {
    const recorded = 'ttlMs=3000 fenceMarginMs=600';
    const given = 'ttlMs=1000 fenceMarginMs=200';
    const live = new LeaseConfigMismatchError('ns', recorded, given, 2);
    expect(live.message).toContain('Namespace "ns" is in use (2 live leases) with another contract');
    expect(live.heldBackLeases).toBe(0);
    const heldBack = new LeaseConfigMismatchError('ns', recorded, given, 0, 3);
    expect(heldBack.message).toContain(
      'is in use (0 live leases, 3 held back after a data loss for the instances that lost them) with another contract',
    );
    expect(heldBack.message).toContain('ttlMs: namespace 3000, this instance 1000');
    expect(heldBack.heldBackLeases).toBe(3);
  });
});

describe('LeaseLayoutChangeError', () => {
  it('names the layout fields that differ (not the TTL), how long the IDs would collide, and what to do', () => {
    const recorded = 'ttlMs=3000 layout=41/0/2/12 unit=1ms epoch=1000';
    const given = 'ttlMs=1000 layout=41/0/2/12 unit=10ms epoch=1000';
    const error = new LeaseLayoutChangeError('ns', recorded, given, 90_500);
    expect(error.message).toContain(
      'Namespace "ns" issued IDs under another layout than this instance\'s (unit: namespace 1ms, this instance 10ms)',
    );
    expect(error.message).not.toContain('ttlMs');
    expect(error.message).toContain('for another 91 s');
    expect(error.message).toContain('Keep the recorded layout');
    expect(error.waitMs).toBe(90_500);
  });
});

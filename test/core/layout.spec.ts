import { SnowflakeConfigError } from '../../lib/core/errors.js';
import {
  DEFAULT_EPOCH,
  LAYOUT_PRESETS,
  checkNodeFitsLayout,
  resolveLayout,
  type LayoutOptions,
  type LayoutPresetName,
} from '../../lib/core/layout.js';

const NOW = Date.UTC(2026, 10, 22);
const MS_PER_YEAR = 365.25 * 24 * 3600 * 1000;

/** The SnowflakeConfigError `fn` throws; fails the test when it throws nothing or something else. */
function configError(fn: () => unknown): SnowflakeConfigError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(SnowflakeConfigError);
    return error as SnowflakeConfigError;
  }
  throw new Error('expected a SnowflakeConfigError, but nothing was thrown');
}

describe('resolveLayout validation', () => {
  it('rejects fields adding up to more than 63 bits, listing each field', () => {
    const error = configError(() =>
      resolveLayout({ timestampBits: 42, datacenterBits: 5, workerBits: 5, sequenceBits: 12, epoch: 0 }, NOW),
    );
    expect(error.option).toBe('layout');
    expect(error.message).toMatch(/64 bits/);
    expect(error.message).toMatch(/at most 63/);
    expect(error.message).toMatch(/timestamp 42 \+ datacenter 5 \+ worker 5 \+ sequence 12/);
  });

  it('accepts exactly 63 bits', () => {
    const layout = resolveLayout(
      { timestampBits: 41, datacenterBits: 5, workerBits: 5, sequenceBits: 12, epoch: 0 },
      NOW,
    );
    expect(layout.totalBits).toBe(63);
    expect(layout.maxId).toBe(2n ** 63n - 1n);
  });

  it.each<[string, LayoutOptions]>([
    ['layout.timestampBits', { timestampBits: 0 }],
    ['layout.timestampBits', { timestampBits: 63 }],
    ['layout.timestampBits', { timestampBits: 40.5 }],
    ['layout.datacenterBits', { datacenterBits: -1 }],
    ['layout.datacenterBits', { datacenterBits: 32 }],
    ['layout.workerBits', { workerBits: 1.5 }],
    ['layout.workerBits', { workerBits: '5' as unknown as number }],
    ['layout.sequenceBits', { sequenceBits: 0 }],
    ['layout.sequenceBits', { sequenceBits: 32 }],
  ])('names %s when its bit count is out of range (%j)', (option, options) => {
    const error = configError(() => resolveLayout(options, NOW));
    expect(error.option).toBe(option);
    expect(error.message).toContain(`\`${option}\``);
  });

  it('rejects an epoch in the future, naming layout.epoch and suggesting one in the past', () => {
    const error = configError(() => resolveLayout({ epoch: NOW + 60_000 }, NOW));
    expect(error.option).toBe('layout.epoch');
    expect(error.message).toMatch(/future/);
    expect(error.message).toContain(new Date(DEFAULT_EPOCH).toISOString());
  });

  it('accepts an epoch equal to now, and an epoch given as a Date', () => {
    expect(resolveLayout({ epoch: NOW }, NOW).epoch).toBe(NOW);
    expect(resolveLayout({ epoch: new Date(NOW - 1000) }, NOW).epoch).toBe(NOW - 1000);
  });

  it.each([[-1], [1.5], [Number.NaN], [new Date('not a date')]])('rejects the epoch %p', (epoch) => {
    expect(configError(() => resolveLayout({ epoch }, NOW)).option).toBe('layout.epoch');
  });

  it('rejects a timestamp field that does not last minLifetimeYears from now', () => {
    // 35 bits of 1 ms last about 1.09 years.
    const error = configError(() => resolveLayout({ epoch: NOW, timestampBits: 35, minLifetimeYears: 2 }, NOW));
    expect(error.option).toBe('layout.timestampBits');
    expect(error.message).toMatch(/1\.1 years from now; at least 2 are required/);
    expect(error.message).toMatch(/minLifetimeYears/);
    expect(resolveLayout({ epoch: NOW, timestampBits: 35, minLifetimeYears: 1 }, NOW).timestampBits).toBe(35);
  });

  it('says when the timestamp field has already run out, and how to fix it', () => {
    // 30 bits of 1 ms from 1970 ran out on 1970-01-13, long before now: no lifetime requirement can help.
    for (const minLifetimeYears of [0, 10]) {
      const error = configError(() => resolveLayout({ epoch: 0, timestampBits: 30, minLifetimeYears }, NOW));
      expect(error.option).toBe('layout.timestampBits');
      expect(error.message).toContain(`already ran out on ${new Date(2 ** 30 - 1).toISOString()}`);
      expect(error.message).not.toMatch(/years from now/);
      expect(error.message).toMatch(/later `layout\.epoch`/);
      expect(error.message).toMatch(/more `layout\.timestampBits`/);
      expect(error.message).not.toMatch(/minLifetimeYears/);
    }
  });

  it('accepts a field that lasts until exactly now when no lifetime is required', () => {
    const epoch = NOW - (2 ** 30 - 1);
    expect(resolveLayout({ epoch, timestampBits: 30, minLifetimeYears: 0 }, NOW).lastTimestampMs).toBe(NOW);
  });

  it('gives a short remaining lifetime in days rather than "0.0 years"', () => {
    // 31 bits of 1 ms last 24.9 days.
    const error = configError(() => resolveLayout({ epoch: NOW, timestampBits: 31 }, NOW));
    expect(error.message).toMatch(/, 24 days from now; at least 10 are required/);
    expect(error.message).not.toMatch(/0\.0 years/);
  });

  it('counts the lifetime from now, not from the epoch', () => {
    // 41 bits of 1 ms from 1990 end in 2059: 32.8 years from late 2026, though 69.7 from the epoch.
    const epoch = Date.UTC(1990, 0, 1);
    expect(() => resolveLayout({ epoch, minLifetimeYears: 32 }, NOW)).not.toThrow();
    expect(configError(() => resolveLayout({ epoch, minLifetimeYears: 33 }, NOW)).option).toBe('layout.timestampBits');
  });

  it('defaults minLifetimeYears to 10', () => {
    // 38 bits of 1 ms last 8.7 years.
    expect(configError(() => resolveLayout({ epoch: NOW, timestampBits: 38 }, NOW)).option).toBe(
      'layout.timestampBits',
    );
    expect(() => resolveLayout({ epoch: NOW, timestampBits: 39 }, NOW)).not.toThrow();
  });

  it.each([[-1], [Number.NaN], ['10' as unknown as number]])('rejects minLifetimeYears %p', (minLifetimeYears) => {
    expect(configError(() => resolveLayout({ minLifetimeYears }, NOW)).option).toBe('layout.minLifetimeYears');
  });

  it.each([[0], [2], [100], [60_000], [1.5], ['1' as unknown as number]])('rejects the time unit %p', (timeUnitMs) => {
    const error = configError(() => resolveLayout({ timeUnitMs: timeUnitMs as LayoutOptions['timeUnitMs'] }, NOW));
    expect(error.option).toBe('layout.timeUnitMs');
    expect(error.message).toMatch(/1, 10 or 1000/);
  });

  it.each([[1], [10], [1000]] as const)('accepts the time unit %p ms', (timeUnitMs) => {
    expect(resolveLayout({ timeUnitMs }, NOW).timeUnitMs).toBe(timeUnitMs);
  });

  it('rejects an unknown preset, listing the known ones', () => {
    const error = configError(() => resolveLayout({ preset: 'instagram' as LayoutPresetName }, NOW));
    expect(error.option).toBe('layout.preset');
    expect(error.message).toMatch(/"instagram"/);
    expect(error.message).toMatch(/twitter/);
    expect(error.message).toMatch(/js-safe/);
  });

  it('does not accept prototype keys as preset names', () => {
    expect(configError(() => resolveLayout({ preset: 'toString' as LayoutPresetName }, NOW)).option).toBe(
      'layout.preset',
    );
  });

  it('rejects an unknown key, naming it and listing the keys a layout has', () => {
    const error = configError(() => resolveLayout({ preset: 'js-safe', sequenceBit: 14 } as LayoutOptions, NOW));
    expect(error.option).toBe('layout.sequenceBit');
    expect(error.message).toContain('`layout.sequenceBit`');
    expect(error.message).toMatch(/did you mean `sequenceBits`\?/);
    expect(error.message).toContain(
      'preset, epoch, timeUnitMs, timestampBits, datacenterBits, workerBits, sequenceBits, shardBits, minLifetimeYears',
    );
  });

  it('names the first of several unknown keys and lists the others', () => {
    const error = configError(() => resolveLayout({ bits: 1, shards: 2 } as unknown as LayoutOptions, NOW));
    expect(error.option).toBe('layout.bits');
    expect(error.message).toMatch(/also unknown: shards/);
    expect(error.message).not.toMatch(/did you mean/);
  });

  it.each([[42], [null], [true], [[]], [() => ({})], [42n]])(
    'rejects the layout %p, listing presets and keys',
    (layout) => {
      const error = configError(() => resolveLayout(layout as unknown as LayoutOptions, NOW));
      expect(error.option).toBe('layout');
      expect(error.message).toMatch(/a preset name \(twitter, default, js-safe, sharded\)/);
      expect(error.message).toMatch(/the keys preset, epoch,/);
    },
  );

  it('takes a preset name for { preset }, undefined for the default, and keys given as undefined', () => {
    expect(resolveLayout('twitter', NOW)).toEqual(resolveLayout({ preset: 'twitter' }, NOW));
    expect(resolveLayout(undefined, NOW)).toEqual(resolveLayout({ preset: 'default' }, NOW));
    expect(resolveLayout({ preset: undefined, sequenceBits: undefined }, NOW)).toEqual(resolveLayout({}, NOW));
    expect(configError(() => resolveLayout('instagram' as LayoutPresetName, NOW)).option).toBe('layout.preset');
  });

  it('lets options override a preset field by field', () => {
    const layout = resolveLayout({ preset: 'twitter', workerBits: 4, sequenceBits: 13 }, NOW);
    expect([layout.timestampBits, layout.datacenterBits, layout.workerBits, layout.sequenceBits]).toEqual([
      41, 5, 4, 13,
    ]);
    expect(layout.epoch).toBe(1288834974657);
  });

  it('derives shifts and limits from the fields', () => {
    const layout = resolveLayout(
      { epoch: NOW, timestampBits: 40, datacenterBits: 3, workerBits: 7, sequenceBits: 11 },
      NOW,
    );
    expect(layout.workerShift).toBe(11);
    expect(layout.datacenterShift).toBe(18);
    expect(layout.timestampShift).toBe(21);
    expect(layout.maxSequence).toBe(2047);
    expect(layout.maxWorkerId).toBe(127);
    expect(layout.maxDatacenterId).toBe(7);
    expect(layout.maxTimestamp).toBe(2 ** 40 - 1);
    expect(layout.maxId).toBe(2n ** 61n - 1n);
    expect(Object.isFrozen(layout)).toBe(true);
  });
});

describe('checkNodeFitsLayout: each value must fit its field', () => {
  const layout = resolveLayout({ preset: 'twitter' }, NOW);

  it('accepts the largest datacenter and worker IDs', () => {
    expect(() => checkNodeFitsLayout(layout, 31, 31)).not.toThrow();
  });

  it.each([[32], [-1], [1.5], [Number.NaN]])('names workerId for %p', (workerId) => {
    const error = configError(() => checkNodeFitsLayout(layout, 0, workerId));
    expect(error.option).toBe('workerId');
    expect(error.message).toMatch(/0 to 31/);
    expect(error.message).toMatch(/workerBits/);
  });

  it.each([[32], [-1], [2.5]])('names datacenterId for %p', (datacenterId) => {
    const error = configError(() => checkNodeFitsLayout(layout, datacenterId, 0));
    expect(error.option).toBe('datacenterId');
    expect(error.message).toMatch(/datacenterBits/);
  });

  it('allows only 0 in a field of 0 bits', () => {
    const noDatacenter = resolveLayout({ preset: 'default' }, NOW);
    expect(() => checkNodeFitsLayout(noDatacenter, 0, 0)).not.toThrow();
    expect(configError(() => checkNodeFitsLayout(noDatacenter, 1, 0)).option).toBe('datacenterId');
  });
});

describe('presets', () => {
  it('twitter is 41/5/5/12 bits of 1 ms from 1288834974657', () => {
    const layout = resolveLayout({ preset: 'twitter' }, NOW);
    expect(layout).toMatchObject({
      epoch: 1288834974657,
      timeUnitMs: 1,
      timestampBits: 41,
      datacenterBits: 5,
      workerBits: 5,
      sequenceBits: 12,
      totalBits: 63,
      timestampShift: 22,
      datacenterShift: 17,
      workerShift: 12,
    });
  });

  it('js-safe holds every ID exactly as a JS number, lasts 50 years and gives 2^15 IDs per second per worker', () => {
    const layout = resolveLayout({ preset: 'js-safe', minLifetimeYears: 50 }, NOW);
    expect(layout.totalBits).toBeLessThanOrEqual(53);
    expect(layout.maxId).toBeLessThanOrEqual(BigInt(Number.MAX_SAFE_INTEGER));
    expect((layout.lastTimestampMs - NOW) / MS_PER_YEAR).toBeGreaterThanOrEqual(50);
    const idsPerSecondPerWorker = (2 ** layout.sequenceBits * 1000) / layout.timeUnitMs;
    expect(idsPerSecondPerWorker).toBeGreaterThanOrEqual(2 ** 15);
    expect(layout.epoch).toBeLessThanOrEqual(NOW);
  });

  it('default has a recent epoch and lasts the default lifetime', () => {
    const layout = resolveLayout({}, NOW);
    expect(layout.epoch).toBe(DEFAULT_EPOCH);
    expect(layout.epoch).toBeGreaterThanOrEqual(Date.UTC(2024, 0, 1));
    expect(layout.totalBits).toBeLessThanOrEqual(63);
    expect((layout.lastTimestampMs - NOW) / MS_PER_YEAR).toBeGreaterThanOrEqual(50);
  });

  it.each(Object.keys(LAYOUT_PRESETS) as LayoutPresetName[])('%s resolves with the real clock', (preset) => {
    expect(() => resolveLayout({ preset })).not.toThrow();
  });

  it('cannot be modified', () => {
    expect(Object.isFrozen(LAYOUT_PRESETS)).toBe(true);
    expect(Object.isFrozen(LAYOUT_PRESETS.twitter)).toBe(true);
  });
});

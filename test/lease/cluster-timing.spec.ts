import {
  nodeTimeoutAdvice,
  promotionBoundMs,
  promotionWindowMs,
  recommendedNodeTimeoutMs,
} from '../../lib/lease/redis/cluster.timing.js';

/** The defaults the settings derive from a TTL: renew every TTL / 4, fence margin TTL / 5. */
const timing = (ttlMs: number) => ({
  ttlMs,
  renewIntervalMs: Math.floor(ttlMs / 4),
  fenceMarginMs: Math.floor(ttlMs / 5),
});

describe('cluster-node-timeout against the lease: the promotion window', () => {
  it('is the TTL less one renew interval and the fence margin', () => {
    expect(promotionWindowMs(timing(10_000))).toBe(5500);
    expect(promotionWindowMs(timing(6000))).toBe(3300);
    expect(promotionWindowMs({ ttlMs: 3000, renewIntervalMs: 750, fenceMarginMs: 600 })).toBe(1650);
  });

  it('bounds a promotion by two node timeouts and the election', () => {
    expect(promotionBoundMs(1000)).toBe(3000);
    expect(promotionBoundMs(15_000)).toBe(31_000);
  });

  it('recommends the largest node timeout that fits: 2200 ms for the default TTL, 1100 ms for 6 s', () => {
    expect(recommendedNodeTimeoutMs(timing(10_000))).toBe(2200);
    expect(recommendedNodeTimeoutMs(timing(6000))).toBe(1100);
    expect(nodeTimeoutAdvice(recommendedNodeTimeoutMs(timing(6000)), timing(6000))).toBeUndefined();
    expect(nodeTimeoutAdvice(recommendedNodeTimeoutMs(timing(6000)) + 100, timing(6000))).toContain('1100 ms or less');
  });

  it("warns for Redis's default 15 s with the default TTL, naming the setting, the window and the fix", () => {
    const advice = nodeTimeoutAdvice(15_000, timing(10_000));
    expect(advice).toContain('cluster-node-timeout is 15000 ms');
    expect(advice).toContain('31000 ms');
    expect(advice).toContain('5500 ms');
    expect(advice).toContain('set cluster-node-timeout to 2200 ms or less');
  });

  it('asks for a longer TTL where no node timeout fits a short one', () => {
    expect(nodeTimeoutAdvice(1000, timing(2000))).toContain('raise redis.ttlMs');
  });
});

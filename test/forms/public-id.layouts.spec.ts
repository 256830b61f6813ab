import { InvalidSnowflakeError } from '../../lib/core/errors.js';
import { resolveLayout, type LayoutOptions } from '../../lib/core/layout.js';
import { publicIdForm } from '../../lib/forms/public-id.form.js';
import { SnowflakeCodec } from '../../lib/core/codec.js';

const KEY = 'one-key-shared-by-two-services-0123';
const FAR_FUTURE = { now: () => 8.64e15 };

/** How many of `count` public IDs written under layout `a` read back under layout `b`. */
function crossReads(a: LayoutOptions | 'default' | 'twitter', b: LayoutOptions | 'default' | 'twitter', count = 300) {
  const writer = publicIdForm({ keys: [KEY], layout: a, prefix: 'user', clock: FAR_FUTURE });
  const reader = publicIdForm({ keys: [KEY], layout: b, prefix: 'user', clock: FAR_FUTURE });
  const codec = new SnowflakeCodec(resolveLayout(a));
  let read = 0;
  for (let i = 0; i < count; i++) {
    const id = codec.compose({ timestamp: Date.UTC(2026, 6, 1) + i * 997, workerId: i % 32, sequence: i });
    try {
      reader.parse(writer.format(id));
      read++;
    } catch (error) {
      if (!(error instanceof InvalidSnowflakeError)) throw error;
    }
  }
  return read;
}

describe('public IDs are bound to the whole layout', () => {
  it('are not read by a service of another 63-bit layout with the same key and prefix', () => {
    // 12 check bits: a foreign value passes about once in 4,096.
    expect(crossReads('default', 'twitter')).toBeLessThanOrEqual(2);
    expect(crossReads('twitter', 'default')).toBeLessThanOrEqual(2);
  });

  it('are not read under a layout that differs only in its epoch', () => {
    const earlier = { epoch: Date.UTC(2025, 0, 1) };
    expect(crossReads('default', earlier)).toBeLessThanOrEqual(2);
  });

  it('are read back under the same layout', () => {
    expect(crossReads('twitter', 'twitter')).toBe(300);
  });
});

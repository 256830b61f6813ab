/**
 * How a lock holder is judged from here (Linux, where /proc tells boots, PID namespaces and process starts apart): a
 * pid is proof only within its own PID namespace and boot; a holder of another boot is gone when it took its lock
 * before this host booted (a reboot), and on another machine of the same host name when it took it since.
 */
import { currentHolder, holderElsewhere, holderState, type LockHolder } from '../../lib/worker/lock-holder.js';
import { skipVisibly } from '../support/skip-notice.js';

const self = currentHolder();

if (self.bootId === undefined || self.pidNamespace === undefined) {
  skipVisibly('lock holders judged across boots and PID namespaces', 'no /proc here', 'needs Linux /proc');
} else {
  describe('lock holders judged across boots and PID namespaces', () => {
    const other = (change: Partial<LockHolder>): LockHolder => ({ ...self, pid: 1, threadId: 0, ...change });

    it('takes a holder of another boot that locked before this host booted for gone (a reboot)', () => {
      const beforeBoot = other({ bootId: 'another-boot', startedAt: '2000-01-01T00:00:00.000Z' });
      expect(holderState(beforeBoot, self)).toBe('gone');
      expect(holderElsewhere(beforeBoot)).toBeUndefined();
    });

    it('counts a holder of another boot that locked since this host booted as running on another machine', () => {
      const sinceBoot = other({ bootId: 'another-boot', startedAt: new Date().toISOString() });
      expect(holderState(sinceBoot, self)).toBe('foreign');
      expect(holderElsewhere(sinceBoot)).toBe('machine');
    });

    it('leaves a holder of another PID namespace of this boot to its socket', () => {
      const container = other({ pidNamespace: 'pid:[1]' });
      expect(holderState(container, self)).toBe('unseen');
      expect(holderElsewhere(container)).toBe('pid-namespace');
    });

    it('judges a holder of this namespace by its pid, and this thread as itself', () => {
      expect(holderState(self, self)).toBe('this-thread');
      expect(holderElsewhere(self)).toBeUndefined();
      // Pid 1 of this namespace started at another time than the one recorded: not the holder.
      expect(holderState(other({ processStart: '1' }), self)).toBe('gone');
    });
  });
}

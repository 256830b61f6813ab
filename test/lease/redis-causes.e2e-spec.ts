/**
 * Every lease error names the real cause and the address (never the password), with advice that fits it; wrong
 * credentials and unknown hosts fail at once instead of being retried like a network blip. Against real
 * redis-servers: one with a password, and a port nothing listens on.
 */
import { RedisUnavailableError } from '../../lib/lease/lease.errors.js';
import { IdService } from '../../lib/module/id.service.js';
import { RedisServer, freePort } from '../support/redis-server.js';

const RETRIES = { bootstrapAttempts: 4, retryBackoffMs: 300, connectTimeoutMs: 1000 } as const;

async function bootFailure(url: string): Promise<{ error: RedisUnavailableError; ms: number }> {
  const ids = new IdService({ redis: { url, ...RETRIES } });
  const started = performance.now();
  try {
    await ids.onModuleInit();
  } catch (error) {
    expect(error).toBeInstanceOf(RedisUnavailableError);
    return { error: error as RedisUnavailableError, ms: performance.now() - started };
  } finally {
    await ids.onApplicationShutdown();
  }
  throw new Error('bootstrap succeeded');
}

describe('Redis errors carry their cause', () => {
  let secured: RedisServer;

  beforeAll(async () => {
    secured = await RedisServer.start({ args: ['--requirepass', 's3cret-pw'] });
  });
  afterAll(() => secured.dispose());

  it('a wrong password: WRONGPASS, the address without the password, advice on the password, no retries', async () => {
    const { error, ms } = await bootFailure(`redis://:not-the-password@127.0.0.1:${secured.port}`);
    expect(error.message).toContain('WRONGPASS');
    expect(error.message).toContain(`redis://:***@127.0.0.1:${secured.port}`);
    expect(error.message).not.toContain('not-the-password');
    expect(error.message).toMatch(/password is wrong/);
    expect(error.attempts).toBe(1);
    expect(ms).toBeLessThan(RETRIES.retryBackoffMs * 3);
  });

  it('a missing password: NOAUTH, with advice to add one', async () => {
    const { error } = await bootFailure(`redis://127.0.0.1:${secured.port}`);
    expect(error.message).toContain('NOAUTH');
    expect(error.message).toMatch(/requires a password/);
    expect(error.attempts).toBe(1);
  });

  it('an unknown host: ENOTFOUND, with advice on the host name, no retries', async () => {
    const { error } = await bootFailure('redis://snowflake-redis.invalid:6379');
    expect(error.message).toContain('ENOTFOUND');
    expect(error.message).toContain('snowflake-redis.invalid:6379');
    expect(error.message).toMatch(/host name does not resolve/);
    expect(error.attempts).toBe(1);
  });

  it('a closed port: ECONNREFUSED and the address, retried as a network error', async () => {
    const port = await freePort();
    const { error } = await bootFailure(`redis://127.0.0.1:${port}`);
    expect(error.message).toContain('ECONNREFUSED');
    expect(error.message).toContain(`127.0.0.1:${port}`);
    expect(error.message).toMatch(/nothing listens at that address/);
    expect(error.attempts).toBe(RETRIES.bootstrapAttempts);
  });
});

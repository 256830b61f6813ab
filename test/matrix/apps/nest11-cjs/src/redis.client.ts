import Redis from 'ioredis';

/** The app's own ioredis 5 client, given to the module (which never closes it): checks the client type fits. */
export const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { lazyConnect: true });

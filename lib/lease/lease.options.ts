/**
 * The part of an ioredis `Redis` or `Cluster` the lease uses. Structural, so that ioredis stays an optional peer.
 *
 * @publicApi
 */
export interface RedisClientLike {
  call(command: string, ...args: (string | number)[]): Promise<unknown>;
  quit(): Promise<unknown>;
  /** `reconnect`: connect again at once (ioredis), so that a Sentinel client asks for the master afresh. */
  disconnect(reconnect?: boolean): void;
  on(event: string, listener: (...args: unknown[]) => void): unknown;
  once(event: string, listener: (...args: unknown[]) => void): unknown;
  removeListener?(event: string, listener: (...args: unknown[]) => void): unknown;
  /** Present on ioredis clients; called for a `lazyConnect` client that has not connected yet. */
  connect?(): Promise<unknown>;
  readonly status: string;
}

/**
 * Options of the Redis worker-ID lease.
 *
 * @publicApi
 */
export interface RedisLeaseOptions {
  /** A Redis URL (`redis://host:6379/0`); the module creates the client and closes it on shutdown. */
  url?: string;
  /** An existing ioredis `Redis` or `Cluster`; the module never closes it. */
  client?: RedisClientLike;
  /**
   * Keys are `snowflake:{<namespace>:dc<datacenterId>}:…`, or `snowflake:{<namespace>}:…` with `allocateDatacenter`
   * (where a namespace ending in `:dc` and a number is refused: it would name another namespace's keys). Services
   * that must not share worker IDs use different namespaces; every instance of one service must use the same
   * namespace and layout. @default 'default'
   */
  namespace?: string;
  /**
   * How long a claim or renewal holds the worker ID. A crashed holder's ID is free again after this long; a holder
   * that cannot renew stops issuing before it. @default 10000
   */
  ttlMs?: number;
  /** How often the lease is renewed. @default ttlMs / 4 (three renewals may fail before the holder fences) */
  renewIntervalMs?: number;
  /** The holder stops issuing at `ttlMs - fenceMarginMs` after it sent its last successful renewal. @default ttlMs / 5 */
  fenceMarginMs?: number;
  /** The longest a new holder waits for its clock to pass the previous holder's ceiling before taking another ID. @default 2000 */
  maxFloorWaitMs?: number;
  /**
   * At bootstrap, when every worker ID of the namespace is held (a rolling deploy with surge starts new instances
   * before old ones stop), how long the claim waits for the soonest lease to expire or be released before the app
   * fails to start with `LeaseExhaustedError`. 0 fails at once. @default 2 * ttlMs
   */
  waitForFreeWorkerIdMs?: number;
  /**
   * Log a warning when the namespace's free worker IDs fall to this many or fewer (and a line when they recover);
   * `status().lease.capacity.low` and the health details say the same. A number between 0 and 1 is a fraction of the
   * namespace (rounded up to whole IDs); an integer is a count (0: only when full). @default 0.1
   */
  lowCapacityWarning?: number;
  /** Connect timeout of a client created from `url`, and the timeout of each command. @default 2000 */
  connectTimeoutMs?: number;
  /** Claim attempts at bootstrap before the app fails to start. @default 5 */
  bootstrapAttempts?: number;
  /** First back-off between attempts, doubled each time (capped at ttlMs / 4). @default 200 */
  retryBackoffMs?: number;
  /** Hand out datacenter and worker bits together as one number, instead of a fixed `datacenterId`. @default false */
  allocateDatacenter?: boolean;
  /** Wait for this many replicas to acknowledge each claim and renewal (Redis `WAIT`), for failovers. @default 0 */
  waitForReplicas?: number;
  /** The time limit of the `WAIT`. @default 500 */
  waitForReplicasTimeoutMs?: number;
  /**
   * The most this instance's wall clock may differ from the Redis server's clock (`TIME`, measured on every round
   * trip, with half the round trip as its error) while it issues IDs. Beyond it `next()` refuses with
   * `reason: 'clock'` until the clocks agree again. Must satisfy
   * `fenceMarginMs >= clockBackToleranceMs + 2 * maxClockOffsetMs + time unit`.
   * @default (fenceMarginMs - clockBackToleranceMs - time unit) / 2 (499 ms with the defaults)
   */
  maxClockOffsetMs?: number;
  /**
   * With an ioredis Sentinel client (`sentinels` and `name`): at each claim and renewal, confirm with a majority of
   * the Sentinels that the server answering is the master, and fence when that cannot be confirmed. This keeps a
   * holder that still reaches a primary the Sentinels replaced (a split brain) from issuing under a worker ID the
   * promoted side hands out. @default true
   */
  confirmWithSentinels?: boolean;
  /**
   * With an ioredis Cluster client: at each claim, confirm with a majority of the cluster's primaries (`CLUSTER NODES`,
   * `INFO server`) that the node answering serves the namespace's slot, and claim again when that cannot be
   * confirmed. This keeps a primary paused past its replica's promotion from handing out, once it runs again, a worker
   * ID the promoted node handed out. Turn it off only where a proxy hides the cluster's nodes from the client (the
   * claims then fail with a message that says so). @default true
   */
  confirmWithCluster?: boolean;
}

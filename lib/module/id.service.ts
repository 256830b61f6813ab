import { Inject, Injectable, Optional, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { SnowflakeConfigError } from '../core/errors.js';
import { SnowflakeCodec, type ComposeInput, type SnowflakeParts } from '../core/codec.js';
import type { SnowflakeGenerator } from '../core/generator.js';
import type { NextIdOptions } from '../core/generator.options.js';
import type { Layout } from '../core/layout.js';
import { shardInLayout, type ShardKey } from '../core/shard-key.js';
import type { PublicIdForm } from '../forms/public-id.form.js';
import { WorkerBinding } from '../worker/worker-binding.js';
import type { AsyncIdOptions } from '../worker/issue-wait.js';
import type { WorkerIdSource } from '../worker/worker-source.js';
import { issueAsync, issueBatchAsync } from './id.service.async.js';
import { statusOf, type SnowflakeStatus } from './id.service.status.js';
import { RunningServices } from './running-services.js';
import type { SnowflakeModuleOptions } from './snowflake.options.js';
import { createBinding, createGenerator, createWorkerSource } from './snowflake.providers.js';
import { resolveSettings } from './snowflake.settings.js';
import { DEFAULT_GENERATOR_NAME, SNOWFLAKE_BINDING, SNOWFLAKE_NAME, SNOWFLAKE_PUBLIC_IDS } from './snowflake.tokens.js';

export type { SnowflakeStatus } from './id.service.status.js';

/**
 * Issues and decodes IDs: the facade over the generator, the codec and the worker-ID source's binding, which the
 * module builds under its tokens. Inject it by class.
 *
 * @publicApi
 */
@Injectable()
export class IdService implements OnModuleInit, OnApplicationShutdown {
  /** The validated layout IDs follow. */
  readonly layout: Layout;
  /** The registration's name (`SnowflakeModule.forRoot({ name })`); `'default'` without one. */
  readonly name: string;
  private readonly codec: SnowflakeCodec;
  private readonly binding: WorkerBinding;
  private readonly generator: SnowflakeGenerator;
  private readonly publicIds: PublicIdForm | null;

  /**
   * Built by the module from its providers. Built by hand (`new IdService({ workerId: 1 })`) it makes its own
   * parts; a lease then starts with `onModuleInit()`. A fixed worker ID issues at once, but its guards (another
   * module of this process, the host lock against other processes, the ceiling file) are taken only by
   * `onModuleInit()`: call it before issuing, or two services on one worker ID issue the same IDs.
   */
  constructor(
    @Inject(SNOWFLAKE_BINDING) bindingOrOptions: WorkerBinding | SnowflakeModuleOptions,
    @Optional() @Inject(SNOWFLAKE_NAME) name?: string,
    @Optional() @Inject(SNOWFLAKE_PUBLIC_IDS) publicIds?: PublicIdForm | null,
  ) {
    this.name = name ?? DEFAULT_GENERATOR_NAME;
    if (bindingOrOptions instanceof WorkerBinding) {
      this.binding = bindingOrOptions;
      this.publicIds = publicIds ?? null;
    } else {
      const settings = resolveSettings(bindingOrOptions);
      this.binding = createBinding(settings, createGenerator(settings), createWorkerSource(settings));
      this.publicIds = settings.publicIds ?? null;
    }
    this.generator = this.binding.generator;
    this.layout = this.binding.layout;
    this.codec = new SnowflakeCodec(this.layout);
  }

  /** Claims the worker ID (with a lease) before the app serves: the module has done it already; by hand, here. */
  async onModuleInit(): Promise<void> {
    await this.binding.start();
    RUNNING.add(this);
  }

  /** Releases the worker ID, recording the last issued timestamp, once the app has stopped serving. */
  async onApplicationShutdown(): Promise<void> {
    RUNNING.delete(this);
    await this.binding.stop();
  }

  /**
   * The service of the app running in this process, for what cannot be injected (a pipe built with `new`): the
   * default registration's, or with `name` the registration of that name.
   * @throws SnowflakeConfigError when none runs, or several with different layouts do
   */
  static current(name = DEFAULT_GENERATOR_NAME): IdService {
    return RUNNING.find(name);
  }

  /** The current worker ID. */
  get workerId(): number {
    return this.generator.workerId;
  }

  /** The current datacenter ID. */
  get datacenterId(): number {
    return this.generator.datacenterId;
  }

  /** The worker-ID source behind this service, for integrations that listen to it (metrics). @internal */
  get workerSource(): WorkerIdSource {
    return this.binding.source;
  }

  /**
   * The next ID. With `{ shardKey }` (a layout with a shard field, such as `'sharded'`), the ID carries the key's
   * shard, the same in every process: `shardOf(id)` and `id % 2^shardBits` give it back.
   * @throws ClockMovedBackError, SequenceExhaustedError, WorkerUnavailableError
   * @throws InvalidShardKeyError for an unusable key, or a key on a layout without a shard field
   */
  next(options?: NextIdOptions): bigint {
    try {
      return this.generator.next(options);
    } catch (error) {
      throw this.binding.translate(error);
    }
  }

  /** The next ID as a decimal string, the safe form for JSON and JavaScript clients. */
  nextString(options?: NextIdOptions): string {
    return this.next(options).toString();
  }

  /** The next ID as a number; only for layouts of 53 bits or fewer. @throws UnsafeNumberError otherwise */
  nextNumber(options?: NextIdOptions): number {
    try {
      return this.generator.nextNumber(options);
    } catch (error) {
      throw this.binding.translate(error);
    }
  }

  /**
   * `count` IDs in increasing order, in one call. At most as many as the layout issues within `maxSyncWaitMs`
   * (40,960 on `twitter` with the default 10 ms), so that a batch never spins for the next time unit longer than
   * one {@link next} may. @throws BatchTooLargeError for more: use {@link nextBatchAsync}
   */
  nextBatch(count: number, options?: NextIdOptions): bigint[] {
    try {
      return this.generator.nextBatch(count, options);
    } catch (error) {
      throw this.binding.translate(error);
    }
  }

  /**
   * `count` IDs in increasing order, any number of them, waiting without blocking the event loop between time
   * units and while the lease is being re-claimed or switched (as {@link nextAsync} does). The wait for a worker ID
   * is bounded over the whole batch by `maxAsyncWaitMs`, or by `options.timeoutMs`; `options.signal` ends it at once.
   * @throws WorkerWaitTimeoutError when the bound runs out; the signal's reason when it aborts
   */
  nextBatchAsync(count: number, options?: AsyncIdOptions): Promise<bigint[]> {
    return issueBatchAsync(this.binding, count, options);
  }

  /**
   * The next ID, waiting (without blocking the event loop) when the sequence is used up or the lease is being
   * re-claimed or switched. The wait for a worker ID lasts at most `maxAsyncWaitMs` (the module option), or
   * `options.timeoutMs` for this call; `options.signal` ends it at once, as Node's own APIs take one.
   * @throws WorkerWaitTimeoutError when the bound runs out (what kept the worker ID away, and how long it waited)
   * @throws the signal's reason when it aborts (at once when it has aborted already)
   * @example
   * const id = await ids.nextAsync({ signal: AbortSignal.timeout(2000) });
   */
  nextAsync(options?: AsyncIdOptions): Promise<bigint> {
    return issueAsync(this.binding, options);
  }

  /** The longest an asynchronous call waits for a worker ID without a `timeoutMs` of its own (`maxAsyncWaitMs`). */
  get maxAsyncWaitMs(): number {
    return this.binding.maxAsyncWaitMs;
  }

  /**
   * Splits an ID into time, datacenter, worker, sequence and, on a layout with a shard field, shard.
   * @throws InvalidSnowflakeError on malformed input
   */
  decode(id: bigint | string | number): SnowflakeParts {
    return this.codec.decode(id);
  }

  /**
   * The shard an ID carries, read from its bits without a lookup.
   * @throws InvalidSnowflakeError on malformed input, or on a layout without a shard field
   */
  shardOf(id: bigint | string | number): number {
    return this.codec.shardOf(id);
  }

  /**
   * The shard IDs issued with `{ shardKey: key }` carry: where to look for a key's rows before any ID is known.
   * @throws InvalidShardKeyError for an unusable key, or on a layout without a shard field
   */
  shardOfKey(key: ShardKey): number {
    return shardInLayout(this.layout, key);
  }

  /** Builds an ID from its parts; the inverse of {@link decode}. */
  compose(parts: ComposeInput): bigint {
    return this.codec.compose(parts);
  }

  /** The smallest ID issued at `date` (its time unit): the lower bound of `WHERE id BETWEEN`. */
  minIdAt(date: Date | number): bigint {
    return this.codec.minIdAt(date);
  }

  /** The largest ID issued at `date` (its time unit): the upper bound of `WHERE id BETWEEN`. */
  maxIdAt(date: Date | number): bigint {
    return this.codec.maxIdAt(date);
  }

  /**
   * The public ID of `id`: an opaque, fixed-width text that hides when the ID was issued and how many were, written
   * with the first of `publicIds.keys`. @throws SnowflakeConfigError without the `publicIds` option
   */
  toPublicId(id: bigint): string {
    return this.publicIdForm.format(id);
  }

  /**
   * The ID behind a public ID written with any of `publicIds.keys`.
   * @throws InvalidPublicIdError for a forged, altered or foreign value; InvalidSnowflakeTextError for malformed text
   */
  fromPublicId(text: string): bigint {
    return this.publicIdForm.parse(text);
  }

  /**
   * The public-ID form of the `publicIds` option, for the pipe's `form` option and the validators.
   * @throws SnowflakeConfigError without the `publicIds` option
   */
  get publicIdForm(): PublicIdForm {
    if (this.publicIds === null) {
      throw new SnowflakeConfigError(
        'publicIds',
        'public IDs need keys: set `publicIds: { keys: [secret] }` in SnowflakeModule.forRoot() (a secret of at ' +
          'least 16 bytes, such as the output of `openssl rand -base64 32`).',
      );
    }
    return this.publicIds;
  }

  /** The worker, the counters and the lease. */
  status(): SnowflakeStatus {
    return statusOf(this.binding);
  }
}

/** The services started in this process and not shut down, in start order. */
const RUNNING = new RunningServices<IdService>();

import type { Redis } from 'ioredis';
import type { LeaseKeys } from '../../lib/lease/lease.keys.js';
import type { LeaseSettings } from '../../lib/lease/lease.settings.js';
import { LeaseProtocol } from '../../lib/lease/redis/lease.protocol.js';

/** What a protocol writes into the scripts' arguments. */
export type ScriptSettings = Pick<LeaseSettings, 'ttlMs' | 'config' | 'idCount' | 'fenceMarginMs'>;

/**
 * The lease's Lua scripts one call at a time on a real redis-server, in the namespace of one hash tag: for specs that
 * drive the scripts directly, to reach cases the lease's own flow meets only through rare interleavings. The spec
 * builds each request with `protocol(…)` and decodes the raw reply of `run(…)` with `LeaseProtocol.decode…`.
 */
export class LeaseScripts {
  /** The namespace's keys, spelled as the lease spells them for a namespace whose hash tag is `tag`. */
  readonly keys: LeaseKeys;

  constructor(
    private readonly redis: Redis,
    tag: string,
  ) {
    this.keys = {
      meta: `snowflake:{${tag}}:meta`,
      cursor: `snowflake:{${tag}}:cursor`,
      expiry: `snowflake:{${tag}}:expiry`,
      recordPrefix: `snowflake:{${tag}}:w:`,
    };
  }

  protocol(settings: ScriptSettings): LeaseProtocol {
    return new LeaseProtocol(this.keys, settings);
  }

  /** Runs `lua` against the record of `id`, with the KEYS `protocol` names, and returns its raw reply. */
  async run(lua: string, protocol: LeaseProtocol, id: number, args: (string | number)[]): Promise<unknown[]> {
    return (await this.redis.eval(lua, 4, ...protocol.scriptKeys(id), ...args)) as unknown[];
  }
}

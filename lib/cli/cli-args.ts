import { parseArgs } from 'node:util';
import { resolveLayout, type Layout, type LayoutOptions, type LayoutPresetName } from '../core/layout.js';

/** A mistake on the command line: exit code 2, the usage printed. */
export class UsageError extends Error {}

export const USAGE = `Usage: nestjs-snowflake <command> [options]

Commands:
  decode <id>...                      split IDs into time, datacenter, worker, sequence (and shard)
  range --from <date> --to <date>     the ID bounds for WHERE id BETWEEN <min> AND <max>
  leases --redis <url> [--namespace <ns>] [--datacenter <n>] [--low-capacity-warning <n>]
                                      who holds which worker ID in a Redis lease namespace (read-only);
                                      low: free IDs at or below redis.lowCapacityWarning (default 0.1)

Options:
  --layout <name|json>   twitter, js-safe, sharded, default (the default), or a layout as JSON, e.g. '{"workerBits":8}'
  --json                 print JSON for scripts instead of a table
  --help                 this text`;

export interface CliArgs {
  command: string;
  positionals: string[];
  layout: Layout;
  json: boolean;
  from?: string;
  to?: string;
  redis?: string;
  namespace: string;
  datacenter: number;
  /** As `redis.lowCapacityWarning`: a fraction of the namespace, or a count of free IDs. */
  lowCapacityWarning: number;
  help: boolean;
}

export function parseCli(argv: string[]): CliArgs {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        layout: { type: 'string' },
        json: { type: 'boolean', default: false },
        from: { type: 'string' },
        to: { type: 'string' },
        redis: { type: 'string' },
        namespace: { type: 'string', default: 'default' },
        datacenter: { type: 'string', default: '0' },
        'low-capacity-warning': { type: 'string', default: '0.1' },
        help: { type: 'boolean', default: false },
      },
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const { values, positionals } = parsed;
  const [command = '', ...rest] = positionals;
  const datacenter = Number(values.datacenter);
  if (!Number.isSafeInteger(datacenter) || datacenter < 0)
    throw new UsageError('--datacenter: expected an integer ≥ 0');
  const lowCapacityWarning = Number(values['low-capacity-warning']);
  if (
    !Number.isFinite(lowCapacityWarning) ||
    lowCapacityWarning < 0 ||
    (lowCapacityWarning > 1 && lowCapacityWarning % 1 !== 0)
  )
    throw new UsageError('--low-capacity-warning: expected a fraction between 0 and 1, or a whole number of free IDs');
  return {
    command,
    positionals: rest,
    layout: layoutOf(values.layout),
    json: values.json,
    from: values.from,
    to: values.to,
    redis: values.redis,
    namespace: values.namespace,
    datacenter,
    lowCapacityWarning,
    help: values.help,
  };
}

function layoutOf(text: string | undefined): Layout {
  if (text === undefined) return resolveLayout('default');
  if (text.trimStart().startsWith('{')) {
    let options: LayoutOptions;
    try {
      options = JSON.parse(text) as LayoutOptions;
    } catch (error) {
      throw new UsageError(`--layout: not valid JSON (${(error as Error).message})`);
    }
    return resolveLayout(options);
  }
  return resolveLayout(text as LayoutPresetName);
}

/** A date from the command line: ISO 8601, or Unix milliseconds. */
export function dateOf(option: string, text: string | undefined): Date {
  if (text === undefined) throw new UsageError(`${option}: required`);
  const date = /^\d+$/.test(text) ? new Date(Number(text)) : new Date(text);
  if (Number.isNaN(date.getTime())) throw new UsageError(`${option}: not a date: ${JSON.stringify(text)}`);
  return date;
}

/**
 * The fuzz suite: every reader of outside input against hostile generators, each held to an oracle written from the
 * README's rules (the value, the error type, the message length), and time linear in the input. Under `npm test` it
 * runs a short budget; `npm run fuzz` runs the same properties for FUZZ_SECONDS (see fuzz.budget.ts).
 */
import 'reflect-metadata';
import { HttpException } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import fc from 'fast-check';
import { Kind, parseValue as parseGraphQLValue } from 'graphql';
import { parseCli } from '../../lib/cli/cli-args.js';
import { instantOf } from '../../lib/cli/cli-dates.js';
import { UsageError } from '../../lib/cli/usage.error.js';
import { SnowflakeCodec } from '../../lib/core/codec.js';
import { InvalidSnowflakeError, SnowflakeConfigError } from '../../lib/core/errors.js';
import { resolveLayout } from '../../lib/core/layout.js';
import { publicIdForm } from '../../lib/forms/public-id.form.js';
import { base32Form, base62Form, decimalForm } from '../../lib/forms/radix.form.js';
import { createSnowflakeScalar } from '../../lib/graphql/snowflake-scalar.type.js';
import { ParseSnowflakeIdPipe } from '../../lib/http/parse-snowflake-id.pipe.js';
import { IdService } from '../../lib/module/id.service.js';
import { resolveSettings } from '../../lib/module/snowflake.settings.js';
import type { SnowflakeModuleOptions } from '../../lib/module/snowflake.options.js';
import { IsSnowflakeId, ToSnowflakeId } from '../../lib/validation.js';
import { idProblem, readId, UnreadSnowflakeId } from '../../lib/validation/id-reading.js';
import { check, testTimeoutMs, writeReport } from './fuzz.budget.js';
import {
  BIG_TEXTS,
  anyText,
  decimalText,
  decimalish,
  hostileValue,
  materialize,
  mutated,
  numbers,
} from './hostile.arbitraries.js';
import { MAX_MESSAGE_CHARS, dateOracle, fixedWidthOracle, rawIdOracle } from './oracles.js';

const PROPERTIES = 10;
const KEY = 'fuzz-suite-public-id-key-0123456789';
const layouts = {
  default: resolveLayout('default'),
  'js-safe': resolveLayout('js-safe'),
  twitter: resolveLayout('twitter'),
};
const layoutName = fc.constantFrom<keyof typeof layouts>('default', 'js-safe', 'twitter');
const codecs = Object.fromEntries(Object.entries(layouts).map(([name, layout]) => [name, new SnowflakeCodec(layout)]));

/** A failure that names what broke without printing a megabyte of input. */
class Broken extends Error {}

function short(value: unknown): string {
  try {
    const text =
      typeof value === 'string' ? JSON.stringify(value) : typeof value === 'bigint' ? `${value}n` : String(value);
    return text.length > 60 ? `${text.slice(0, 60)}… (${text.length} chars)` : text;
  } catch {
    return `(${typeof value})`;
  }
}

/** What a call gave: its value, or the error it threw. */
function outcome<T>(call: () => T): { value: T } | { error: unknown } {
  try {
    return { value: call() };
  } catch (error) {
    return { error };
  }
}

/** The call agrees with the oracle: the same ID, or an error of the expected class whose message is short. */
function agrees<T>(
  call: () => T,
  expected: bigint | number | undefined,
  what: string,
  errorClass: new (...args: never[]) => Error = InvalidSnowflakeError,
  read: (value: T) => unknown = (value) => value,
): void {
  const result = outcome(call);
  if ('value' in result) {
    if (expected === undefined)
      throw new Broken(`${what}: accepted, as ${short(read(result.value))}; the rules refuse it`);
    if (read(result.value) !== expected)
      throw new Broken(`${what}: read ${short(read(result.value))}, not ${short(expected)}`);
    return;
  }
  const { error } = result;
  if (!(error instanceof errorClass)) throw new Broken(`${what}: threw ${short(error)}, not a ${errorClass.name}`);
  if (error.message.length > MAX_MESSAGE_CHARS) throw new Broken(`${what}: a message of ${error.message.length} chars`);
  if (expected !== undefined)
    throw new Broken(`${what}: refused (${error.message.slice(0, 200)}); the rules read ${short(expected)}`);
}

class Decimal {
  @IsSnowflakeId() @ToSnowflakeId() id!: bigint;
}

class DecimalList {
  @IsSnowflakeId({ each: true }) @ToSnowflakeId({ each: true }) ids!: bigint[];
}

let ids: IdService;
const base32 = base32Form({ bits: 63 });
const users62 = base62Form({ prefix: 'user', bits: 63 });
const decimal = decimalForm();
const publicIds = publicIdForm({ keys: [KEY], layout: layouts.default, clock: { now: () => Date.UTC(2030, 0, 1) } });

beforeAll(async () => {
  ids = new IdService({ workerId: 1 });
  await ids.onModuleInit();
});
afterAll(async () => {
  await ids.onApplicationShutdown();
  writeReport();
});

const timeout = testTimeoutMs(PROPERTIES);

describe('fuzz: the readers of raw IDs', () => {
  const raw = hostileValue(fc.oneof(decimalText, mutated(decimalText)));

  it(
    'decode() reads exactly what the rules of a raw ID read, on every preset',
    () => {
      check(
        'decode',
        fc.property(layoutName, raw, (name, given) => {
          const value = materialize(given);
          agrees(
            () => codecs[name].decode(value as string),
            rawIdOracle(value, layouts[name]),
            `decode on ${name}`,
            InvalidSnowflakeError,
            (parts) => parts.id,
          );
        }),
        PROPERTIES,
      );
    },
    timeout,
  );

  it(
    'ParseSnowflakeIdPipe answers 400 with a short message exactly where the rules refuse',
    () => {
      const pipe = new ParseSnowflakeIdPipe(ids);
      check(
        'pipe',
        fc.property(raw, (given) => {
          const value = materialize(given);
          const expected = rawIdOracle(value, ids.layout);
          const result = outcome(() => pipe.transform(value, { type: 'param', data: 'id' }));
          if ('value' in result) {
            if (result.value !== expected) throw new Broken(`pipe read ${short(result.value)} for ${short(value)}`);
            return;
          }
          const { error } = result;
          if (!(error instanceof HttpException) || error.getStatus() !== 400)
            throw new Broken(`pipe threw ${short(error)}`);
          if (!(error.cause instanceof InvalidSnowflakeError)) throw new Broken('pipe: a 400 without its cause');
          const body = JSON.stringify(error.getResponse());
          if (body.length > MAX_MESSAGE_CHARS + 200) throw new Broken(`pipe: a body of ${body.length} chars`);
          if (expected !== undefined) throw new Broken(`pipe refused ${short(value)}, which the rules read`);
        }),
        PROPERTIES,
      );
    },
    timeout,
  );

  it(
    'the validators read and refuse as the pipe does, from JSON bodies and from any value',
    () => {
      const json = fc.oneof(
        decimalText,
        decimalish,
        anyText,
        numbers,
        fc.constantFrom(null, true, {}, []),
        fc.array(decimalText, { maxLength: 3 }),
      );
      check(
        'validators',
        fc.property(json, hostileValue(decimalText), (body, given) => {
          const value = materialize(given);
          const dto = plainToInstance(Decimal, { id: body });
          const errors = validateSync(dto);
          const expected = rawIdOracle(body, ids.layout);
          if ((errors.length === 0) !== (expected !== undefined) || (expected !== undefined && dto.id !== expected)) {
            throw new Broken(`@IsSnowflakeId(): ${errors.length} errors for ${short(body)}`);
          }
          const message = Object.values(errors[0]?.constraints ?? {})[0] ?? '';
          if (message.length > MAX_MESSAGE_CHARS)
            throw new Broken(`@IsSnowflakeId(): a message of ${message.length} chars`);
          const list = validateSync(plainToInstance(DecimalList, { ids: body }));
          if (!Array.isArray(body) && list.length === 0)
            throw new Broken(`each: a single ${short(body)} passed as a list`);
          // The same rule below class-transformer, for values no JSON body holds.
          const read = readId(value, undefined);
          const problem = idProblem(read ?? new UnreadSnowflakeId(value), undefined, ids);
          const wanted = rawIdOracle(value, ids.layout);
          if ((problem === undefined) !== (wanted !== undefined))
            throw new Broken(`idProblem disagrees on ${short(value)}`);
          if (problem !== undefined && problem.length > MAX_MESSAGE_CHARS)
            throw new Broken('idProblem: a long message');
        }),
        PROPERTIES,
      );
    },
    timeout,
  );

  it(
    "the GraphQL scalar's variables and literals follow the same rules",
    () => {
      const scalar = createSnowflakeScalar(layouts.twitter);
      const literalSource = fc.oneof(
        decimalText,
        decimalText.map((t) => JSON.stringify(t)),
        decimalish,
        decimalish.map((t) => JSON.stringify(t)),
        fc.constantFrom('-0', '1.5', 'true', 'null', 'ENUM', '[1, 2]', '{a: 1}', '$v', '1e3', '"\\u0661"'),
      );
      check(
        'scalar',
        fc.property(hostileValue(decimalText), literalSource, (given, source) => {
          const value = materialize(given);
          agrees(() => scalar.parseValue(value), rawIdOracle(value, layouts.twitter), `parseValue ${short(value)}`);
          let node;
          try {
            node = parseGraphQLValue(source);
          } catch {
            return;
          }
          const literal =
            node.kind === Kind.STRING ? node.value : node.kind === Kind.INT ? Number(node.value) : Symbol('other');
          agrees(
            () => scalar.parseLiteral(node),
            rawIdOracle(literal, layouts.twitter),
            `parseLiteral ${short(source)}`,
          );
        }),
        PROPERTIES,
      );
    },
    timeout,
  );
});

describe('fuzz: text forms', () => {
  const base32Text = fc.bigInt({ min: 0n, max: (1n << 63n) - 1n }).map((id) => base32.format(id));
  const base62Text = fc.bigInt({ min: 0n, max: (1n << 63n) - 1n }).map((id) => users62.format(id));

  it(
    'decimal, base32 and base62 (prefixed) forms read exactly the texts of their alphabet and width',
    () => {
      check(
        'forms',
        fc.property(
          hostileValue(fc.oneof(base32Text, mutated(base32Text), base62Text, mutated(base62Text), decimalText)),
          (value) => {
            agrees(
              () => base32.parse(value as string),
              fixedWidthOracle(value, 'base32', 63),
              `base32 ${short(value)}`,
            );
            agrees(
              () => users62.parse(value as string),
              fixedWidthOracle(value, 'base62', 63, 'user_'),
              `base62 ${short(value)}`,
            );
            const decimalRule = typeof value === 'string' ? rawIdOracle(value, { maxId: (1n << 63n) - 1n }) : undefined;
            agrees(() => decimal.parse(value as string), decimalRule, `decimal ${short(value)}`);
          },
        ),
        PROPERTIES,
      );
    },
    timeout,
  );

  it(
    'public IDs: genuine ones read back, anything else is refused with a typed, short error',
    () => {
      const genuine = fc
        .bigInt({ min: 0n, max: BigInt(Date.UTC(2029, 0, 1) - layouts.default.epoch) << 22n })
        .map((id) => publicIds.format(id));
      check(
        'public IDs',
        fc.property(
          fc.bigInt({ min: 0n, max: BigInt(Date.UTC(2029, 0, 1) - layouts.default.epoch) << 22n }),
          hostileValue(fc.oneof(genuine, mutated(genuine))),
          (id, given) => {
            const value = materialize(given);
            if (publicIds.parse(publicIds.format(id)) !== id) throw new Broken(`public ID of ${id} does not read back`);
            const result = outcome(() => publicIds.parse(value as string));
            if ('error' in result) {
              const { error } = result;
              if (!(error instanceof InvalidSnowflakeError)) throw new Broken(`public: threw ${short(error)}`);
              if (error.message.length > MAX_MESSAGE_CHARS) throw new Broken('public: a long message');
              return;
            }
            if (typeof value !== 'string' || !new RegExp(publicIds.pattern).test(value)) {
              throw new Broken(`public: read ${short(value)}, which does not match the form's pattern`);
            }
          },
        ),
        PROPERTIES,
      );
    },
    timeout,
  );

  it(
    'a form refuses any value that is not a string, through the pipe too',
    () => {
      const pipe = new ParseSnowflakeIdPipe({ form: base32 });
      check(
        'form pipe',
        fc.property(hostileValue(base32Text), (given) => {
          const value = materialize(given);
          const expected = typeof value === 'string' ? fixedWidthOracle(value, 'base32', 63) : undefined;
          const result = outcome(() => pipe.transform(value, { type: 'body', data: 'id' }));
          if ('value' in result) {
            if (result.value !== expected) throw new Broken(`form pipe read ${short(value)}`);
          } else if (!(result.error instanceof HttpException) || expected !== undefined) {
            throw new Broken(`form pipe threw ${short(result.error)} for ${short(value)}`);
          }
        }),
        PROPERTIES,
      );
    },
    timeout,
  );
});

describe('fuzz: the command line', () => {
  const pad = (n: number, width: number) => String(n).padStart(width, '0');
  const dateText = fc
    .tuple(
      fc.integer({ min: 0, max: 9999 }),
      fc.integer({ min: 0, max: 13 }),
      fc.integer({ min: 0, max: 32 }),
      fc.option(
        fc.tuple(
          fc.integer({ min: 0, max: 25 }),
          fc.integer({ min: 0, max: 61 }),
          fc.option(fc.integer({ min: 0, max: 61 })),
        ),
      ),
      fc.option(fc.integer({ min: 0, max: 9999 })),
      fc.constantFrom('Z', '+01:00', '-05:30', '+24:00', '+00:60', '', 'z', '+0100'),
      fc.constantFrom('T', ' ', 't'),
    )
    .map(([y, mo, d, time, fraction, zone, sep]) => {
      const date = `${pad(y, 4)}-${pad(mo, 2)}-${pad(d, 2)}`;
      if (time === null) return date;
      const [h, mi, s] = time;
      const seconds = s === null ? '' : `:${pad(s, 2)}${fraction === null ? '' : `.${String(fraction)}`}`;
      return `${date}${sep}${pad(h, 2)}:${pad(mi, 2)}${seconds}${zone}`;
    });

  it(
    'range reads exactly the dates of the grammar that exist, and refuses the rest',
    () => {
      check(
        'dates',
        fc.property(fc.oneof(dateText, mutated(dateText), decimalText, decimalish, anyText), (text) => {
          const read = instantOf(text);
          if (read !== dateOracle(text))
            throw new Broken(`instantOf(${short(text)}) is ${read}, not ${dateOracle(text)}`);
        }),
        PROPERTIES,
      );
    },
    timeout,
  );

  it(
    '--datacenter and --low-capacity-warning take decimal digits only, --redis a redis URL',
    () => {
      check(
        'cli options',
        fc.property(fc.oneof(decimalText, decimalish, anyText), (text) => {
          const datacenter = outcome(() => parseCli(['leases', '--datacenter', text]));
          const wanted = /^[0-9]+$/.test(text) && Number.isSafeInteger(Number(text));
          if (
            'value' in datacenter
              ? datacenter.value.datacenter !== Number(text) || !wanted
              : !(datacenter.error instanceof UsageError) || wanted
          ) {
            throw new Broken(`--datacenter ${short(text)}`);
          }
          const redis = outcome(() => parseCli(['leases', '--redis', text]));
          if ('value' in redis) throw new Broken(`--redis ${short(text)} was taken`);
          if (!(redis.error instanceof UsageError) || redis.error.message.length > MAX_MESSAGE_CHARS) {
            throw new Broken(`--redis ${short(text)}: ${short(redis.error)}`);
          }
        }),
        PROPERTIES,
      );
    },
    timeout,
  );
});

describe('fuzz: module options', () => {
  const optionValue = fc.oneof(
    numbers,
    fc.bigInt({ min: -5n, max: 5n }),
    anyText,
    fc.constantFrom(null, true, 'true', 'hostname', {}, [], new Date()),
    fc.jsonValue({ maxDepth: 2 }),
  );
  const key = fc.constantFrom(
    'workerId',
    'datacenterId',
    'layout',
    'clock',
    'requireSafeNumbers',
    'maxSyncWaitMs',
    'publicIds',
    'sequenceStart',
    '__proto__',
    'constructor',
    'prototype',
    'workerld',
  );

  it(
    'resolveSettings() takes valid options and refuses the rest with a short SnowflakeConfigError',
    () => {
      check(
        'options',
        fc.property(fc.dictionary(key, optionValue, { maxKeys: 3 }), fc.boolean(), (entries, viaJson) => {
          // A dictionary key `__proto__` becomes an own key only through JSON.parse, as in a configuration file.
          let options: unknown = entries;
          if (viaJson) {
            try {
              options = JSON.parse(JSON.stringify(entries, (_, v: unknown) => (typeof v === 'bigint' ? String(v) : v)));
            } catch {
              return;
            }
          }
          const result = outcome(() => resolveSettings(options as SnowflakeModuleOptions));
          const own = Object.keys(options as object);
          if ('error' in result) {
            if (!(result.error instanceof SnowflakeConfigError))
              throw new Broken(`options threw ${short(result.error)}`);
            if (result.error.message.length > MAX_MESSAGE_CHARS * 2) throw new Broken('options: a long message');
            return;
          }
          if (own.some((name) => ['__proto__', 'constructor', 'prototype'].includes(name))) {
            throw new Broken(`options with own keys ${own.join(', ')} were taken`);
          }
          const { workerId } = options as { workerId?: unknown };
          if (result.value.worker.kind === 'static') {
            const wanted =
              typeof workerId === 'number' &&
              Number.isInteger(workerId) &&
              workerId >= 0 &&
              workerId <= result.value.layout.maxWorkerId;
            if (!wanted) throw new Broken(`workerId ${short(workerId)} was taken`);
          }
        }),
        PROPERTIES,
      );
    },
    timeout,
  );
});

describe('fuzz: time linear in the input', () => {
  /** The time of one call, in ms; refusal is the usual outcome, only the time counts here. */
  function timeOf(call: () => unknown): number {
    const started = performance.now();
    try {
      call();
    } catch {
      // Refused, as expected of most of these inputs.
    }
    return performance.now() - started;
  }

  /**
   * The fastest of 7 calls of each input, measured in alternating rounds so that a burst of other work on the
   * machine (a collection, another process) weighs on both sides alike.
   */
  function fastestPair(call: (input: unknown) => unknown, small: unknown, large: unknown): [number, number] {
    let bestSmall = Infinity;
    let bestLarge = Infinity;
    for (let round = 0; round < 7; round++) {
      bestSmall = Math.min(
        bestSmall,
        timeOf(() => call(small)),
      );
      bestLarge = Math.min(
        bestLarge,
        timeOf(() => call(large)),
      );
    }
    return [bestSmall, bestLarge];
  }

  const scalar = createSnowflakeScalar(layouts.default);
  const surfaces: [string, (input: unknown) => unknown][] = [
    ['decode', (input) => ids.decode(input as string)],
    ['pipe', (input) => new ParseSnowflakeIdPipe(ids).transform(input, { type: 'param', data: 'id' })],
    // Below class-transformer, whose copy of a million-element array costs seconds of its own.
    ['validator', (input) => idProblem(readId(input, undefined) ?? new UnreadSnowflakeId(input), undefined, ids)],
    ['scalar', (input) => scalar.parseValue(input)],
    ['base32', (input) => base32.parse(input as string)],
    ['base62', (input) => users62.parse(input as string)],
    ['decimal form', (input) => decimal.parse(input as string)],
    ['public ID', (input) => publicIds.parse(input as string)],
    ['CLI date', (input) => instantOf(input as string)],
  ];
  const shapes = Object.keys(BIG_TEXTS.mb) as (keyof typeof BIG_TEXTS.mb)[];

  const FLOOR_MS = 50;
  it.each(surfaces)(
    '%s: a 1 MB input takes at most 30 times as long as a 100 KB one',
    (_, surface) => {
      const inputs: [string, unknown, unknown][] = [
        ...shapes.map((shape): [string, unknown, unknown] => [shape, BIG_TEXTS.mb[shape], BIG_TEXTS.kb100[shape]]),
        ['array', Array.from({ length: 1_000_000 }, () => 1), Array.from({ length: 100_000 }, () => 1)],
      ];
      for (const [shape, mb, kb100] of inputs) {
        // Linear is 10 times; 30 leaves room for a collection or a cache miss. Under 50 ms there is nothing to compare:
        // one preemption on a loaded machine costs that much, while a quadratic cost on 1 MB takes seconds.
        // Three attempts: a machine shared with other work can disturb one, a quadratic cost fails all three.
        let [small, large] = fastestPair(surface, kb100, mb);
        for (let attempt = 1; attempt < 3 && large > FLOOR_MS && large > 30 * small; attempt++) {
          [small, large] = fastestPair(surface, kb100, mb);
        }
        if (large > FLOOR_MS && large > 30 * small) {
          throw new Broken(`${shape}: 1 MB took ${large.toFixed(1)} ms, 100 KB ${small.toFixed(1)} ms`);
        }
      }
    },
    60_000,
  );
});

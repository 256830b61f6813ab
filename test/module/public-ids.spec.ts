import 'reflect-metadata';
import type { DynamicModule, LoggerService } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { SnowflakeConfigError } from '../../lib/core/errors.js';
import { InvalidPublicIdError, InvalidSnowflakeTextError } from '../../lib/forms/form.errors.js';
import { publicIdForm } from '../../lib/forms/public-id.form.js';
import { appPublicIdForm } from '../../lib/module/app-public-id.form.js';
import { IdService } from '../../lib/module/id.service.js';
import { SnowflakeModule } from '../../lib/module/snowflake.module.js';
import { getIdServiceToken } from '../../lib/module/snowflake.names.js';
import type { SnowflakeModuleOptions } from '../../lib/module/snowflake.options.js';

const quiet: LoggerService = { log() {}, error() {}, warn() {}, debug() {}, verbose() {} };
const KEY = 'module-key-0123456789abcdef-0123';
const OLD_KEY = 'module-old-key-0123456789abcdef';

async function boot(module: DynamicModule): Promise<TestingModule> {
  const moduleRef = await Test.createTestingModule({ imports: [module] })
    .setLogger(quiet)
    .compile();
  await moduleRef.init();
  return moduleRef;
}

/** The config error bootstrapping `options` fails with. */
async function bootstrapError(options: unknown): Promise<SnowflakeConfigError> {
  try {
    const moduleRef = await boot(SnowflakeModule.forRoot(options as SnowflakeModuleOptions));
    await moduleRef.close();
  } catch (error) {
    expect(error).toBeInstanceOf(SnowflakeConfigError);
    return error as SnowflakeConfigError;
  }
  throw new Error('expected the bootstrap to fail');
}

describe('the publicIds option and IdService.toPublicId() / fromPublicId()', () => {
  it('turns issued IDs into public IDs and back, as publicIdForm() does with the same keys and layout', async () => {
    const moduleRef = await boot(
      SnowflakeModule.forRoot({ workerId: 1, layout: 'twitter', publicIds: { keys: [KEY], prefix: 'user' } }),
    );
    try {
      const ids = moduleRef.get(IdService);
      const id = ids.next();
      const text = ids.toPublicId(id);
      expect(text).toMatch(/^user_[0-9a-hjkmnp-tv-z]{16}$/);
      expect(ids.fromPublicId(text)).toBe(id);
      expect(publicIdForm({ keys: [KEY], layout: ids.layout, prefix: 'user' }).format(id)).toBe(text);
      expect(ids.publicIdForm.length).toBe(21);
      // The app-wide form reaches the running service.
      expect(appPublicIdForm().format(id)).toBe(text);
      expect(appPublicIdForm().parse(text)).toBe(id);
      // Another key tag: no configured key has it, so the value is refused whatever follows.
      const otherTag = text[5] === 'z' ? 'y' : 'z';
      expect(() => ids.fromPublicId(`user_${otherTag}${text.slice(6)}`)).toThrow(InvalidPublicIdError);
    } finally {
      await moduleRef.close();
    }
  });

  it('takes keys from forRootAsync (configuration) and reads IDs of every configured key', async () => {
    const old = await boot(SnowflakeModule.forRoot({ workerId: 2, publicIds: { keys: [OLD_KEY] } }));
    const id = old.get(IdService).next();
    const oldText = old.get(IdService).toPublicId(id);
    await old.close();

    const moduleRef = await boot(
      SnowflakeModule.forRootAsync({
        useFactory: async () => ({ workerId: 1, publicIds: { keys: [KEY, OLD_KEY] } }),
      }),
    );
    try {
      const ids = moduleRef.get(IdService);
      expect(ids.fromPublicId(oldText)).toBe(id);
      expect(ids.toPublicId(id)).not.toBe(oldText);
      expect(ids.fromPublicId(ids.toPublicId(id))).toBe(id);
    } finally {
      await moduleRef.close();
    }
  });

  it('gives each named registration its own public IDs', async () => {
    const orders = await Test.createTestingModule({
      imports: [
        SnowflakeModule.forRoot({ workerId: 1, publicIds: { keys: [KEY], prefix: 'user' } }),
        SnowflakeModule.forRoot({ name: 'orders', workerId: 2, publicIds: { keys: [OLD_KEY], prefix: 'ord' } }),
      ],
    })
      .setLogger(quiet)
      .compile();
    await orders.init();
    try {
      const users = orders.get(IdService);
      const orderIds = orders.get<IdService>(getIdServiceToken('orders'));
      const id = orderIds.next();
      expect(orderIds.toPublicId(id)).toMatch(/^ord_/);
      expect(users.toPublicId(id)).toMatch(/^user_/);
      expect(appPublicIdForm('orders').parse(orderIds.toPublicId(id))).toBe(id);
      expect(appPublicIdForm().parse(users.toPublicId(id))).toBe(id);
      expect(() => appPublicIdForm().parse(orderIds.toPublicId(id))).toThrow(InvalidSnowflakeTextError);
      // The pattern is each registration's own, read when asked.
      expect(appPublicIdForm('orders').pattern).toBe(orderIds.publicIdForm.pattern);
      expect(appPublicIdForm('orders').pattern).toMatch(/^\^ord_/);
      expect(orderIds.toPublicId(id)).toMatch(new RegExp(appPublicIdForm('orders').pattern!));
      expect(appPublicIdForm().pattern).toMatch(/^\^user_/);
    } finally {
      await orders.close();
    }
  });

  it('works on a service built by hand', () => {
    const ids = new IdService({ workerId: 3, layout: 'js-safe', publicIds: { keys: [KEY], alphabet: 'base62' } });
    const id = ids.next();
    expect(ids.toPublicId(id)).toHaveLength(12);
    expect(ids.fromPublicId(ids.toPublicId(id))).toBe(id);
  });

  it('without the option, says how to set it', async () => {
    const moduleRef = await boot(SnowflakeModule.forRoot({ workerId: 1 }));
    try {
      const ids = moduleRef.get(IdService);
      expect(() => ids.toPublicId(1n)).toThrow(/set `publicIds: \{ keys: \[secret\] \}`/);
      expect(() => ids.fromPublicId('x')).toThrow(SnowflakeConfigError);
      expect(() => appPublicIdForm().parse('x')).toThrow(SnowflakeConfigError);
    } finally {
      await moduleRef.close();
    }
  });

  it.each<[string, unknown, string]>([
    ['not an object', 'secret', 'publicIds'],
    ['no keys', {}, 'publicIds.keys'],
    ['a short key', { keys: ['short'] }, 'publicIds.keys[0]'],
    ['an unknown key', { keys: [KEY], chekBits: 3 }, 'publicIds.chekBits'],
    ['a bad prefix', { keys: [KEY], prefix: 'Users' }, 'publicIds.prefix'],
    ['a bad alphabet', { keys: [KEY], alphabet: 'hex' }, 'publicIds.alphabet'],
    ['bad check bits', { keys: [KEY], checkBits: -1 }, 'publicIds.checkBits'],
  ])('fails at bootstrap on %s, naming the option', async (_what, publicIds, option) => {
    const error = await bootstrapError({ workerId: 1, publicIds, layout: 'twitter' });
    expect(error.option).toBe(option);
  });

  it('suggests the option meant by a misspelt publicIds', async () => {
    const error = await bootstrapError({ workerId: 1, publicId: { keys: [KEY] } });
    expect(error.message).toMatch(/did you mean `publicIds`/);
  });
});

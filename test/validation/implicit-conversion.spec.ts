/**
 * `@ToSnowflakeId()` and `@IsSnowflakeId()` under class-transformer's implicit conversion, directly (no app): what
 * they undo (a JSON number rounded beyond 2^53 that conversion turned into an all-digit string, a `bigint` field that
 * conversion would build with `new BigInt()`), and what they leave alone (the field's recorded type, the app's own
 * transforms, `@Expose({ name })`).
 */
import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { Expose, plainToInstance, Transform } from 'class-transformer';
import { IsSnowflakeId, ToSnowflakeId } from '../../lib/validation.js';
import { UnreadSnowflakeId } from '../../lib/validation/id-reading.js';

const implicit = { enableImplicitConversion: true };

class Order {
  @IsSnowflakeId() @ToSnowflakeId() userId!: bigint;
  @IsSnowflakeId() @ToSnowflakeId({ to: 'string' }) couponId?: string;
  @IsSnowflakeId({ each: true }) @ToSnowflakeId({ each: true }) itemIds?: bigint[];
}

class Renamed {
  @Expose({ name: 'user_id' }) @IsSnowflakeId() @ToSnowflakeId() userId!: bigint;
}

class RenamedText {
  @Expose({ name: 'coupon_id' }) @IsSnowflakeId() @ToSnowflakeId({ to: 'string' }) couponId!: string;
}

class Trimmed {
  // class-transformer runs a field's transforms from the top down: the app's own runs before @ToSnowflakeId().
  @IsSnowflakeId()
  @Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : (value ?? '7')))
  @ToSnowflakeId()
  id!: bigint;
}

const read = <T>(type: new () => T, body: string, options: object = implicit) =>
  plainToInstance(type, JSON.parse(body) as object, options) as Record<string, unknown>;

describe('the ID decorators under implicit conversion', () => {
  it('keep the field’s recorded type, which GraphQL code-first and Swagger read', () => {
    expect(Reflect.getMetadata('design:type', Order.prototype, 'userId')).toBe(BigInt);
    expect(Reflect.getMetadata('design:type', Order.prototype, 'couponId')).toBe(String);
  });

  it('refuse a number rounded beyond 2^53 as sent, in a bigint field, a string field and a list', () => {
    const order = read(Order, '{"userId": 1234567890123456789, "couponId": 9007199254740993, "itemIds": ["1", 2e20]}');
    expect(order.userId).toEqual(new UnreadSnowflakeId(1234567890123456800));
    expect(order.couponId).toEqual(new UnreadSnowflakeId(9007199254740992));
    expect(order.itemIds).toEqual([1n, new UnreadSnowflakeId(2e20)]);
  });

  it('read an object or an array in a bigint field as no ID, instead of failing in `new BigInt()`', () => {
    expect(read(Order, '{"userId": {"a": 1}}').userId).toEqual(new UnreadSnowflakeId({ a: 1 }));
    expect(read(Order, '{"userId": [1, 2]}').userId).toEqual(new UnreadSnowflakeId([1, 2]));
    expect(read(Order, '{"userId": [1, 2]}', {}).userId).toEqual(new UnreadSnowflakeId([1, 2]));
  });

  it('read exact IDs as without the conversion', () => {
    const order = read(Order, '{"userId": "9007199254740993", "couponId": 42, "itemIds": ["7"]}');
    expect(order).toMatchObject({ userId: 9007199254740993n, couponId: '42', itemIds: [7n] });
  });

  it('read the exposed key of a renamed field, never the property’s own name in the body', () => {
    const body = '{"user_id": "1", "userId": "2"}';
    expect(read(Renamed, body, { ...implicit, excludeExtraneousValues: true }).userId).toBe(1n);
    expect(read(Renamed, body, { excludeExtraneousValues: true }).userId).toBe(1n);
  });

  it('refuse a rounded number in a renamed field read to a string, whose sent key is not the property’s', () => {
    // Found by a review: the conversion made "9007199254740992" of it, which nothing after could tell from text.
    expect(read(RenamedText, '{"coupon_id": 9007199254740993}').couponId).toEqual(
      new UnreadSnowflakeId(9007199254740992),
    );
    expect(read(RenamedText, '{"coupon_id": "9007199254740993"}').couponId).toBe('9007199254740993');
    expect(read(RenamedText, '{"coupon_id": 42}').couponId).toBe('42');
    expect(Reflect.getMetadata('design:type', RenamedText.prototype, 'couponId')).toBe(String);
  });

  it('read what the app’s own transforms made of the value', () => {
    expect(read(Trimmed, '{"id": " 1234 "}').id).toBe(1234n);
    expect(read(Trimmed, '{"id": null}').id).toBe(7n);
    expect(read(Trimmed, '{"id": " 1234 "}', {}).id).toBe(1234n);
  });
});

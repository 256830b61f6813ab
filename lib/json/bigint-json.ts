/**
 * A `JSON.stringify` replacer that writes bigints as decimal strings, so IDs reach JavaScript clients exact.
 * Use it with Express: `app.getHttpAdapter().getInstance().set('json replacer', snowflakeJsonReplacer)`.
 *
 * @publicApi
 */
export function snowflakeJsonReplacer(_key: string, value: unknown): unknown {
  // JSON.stringify has already called toJSON() by now, so only the bigint forms themselves are left to handle.
  return bigintJson(value);
}

/**
 * A copy of `value` with every bigint turned into its decimal string, as `JSON.stringify` would meet it: what an
 * object's `toJSON()` returns is converted too, and `BigInt64Array`s become arrays of strings. Objects without
 * bigints are returned as they are (a Date stays a Date); copies keep their prototype, so class-transformer's
 * `@Exclude()` and `instanceof` still apply to them.
 *
 * @publicApi
 */
export function bigintsToStrings<T>(value: T): T {
  return convert(value, '', new WeakMap()) as T;
}

/**
 * The JSON form of a bigint, a boxed bigint (`Object(1n)`, which JSON.stringify unboxes and then throws on) or a
 * 64-bit integer array (which it would write as `{"0":…}` at best); anything else is returned as it is.
 */
function bigintJson(value: unknown): unknown {
  if (typeof value === 'bigint' || value instanceof BigInt) return value.toString();
  if (value instanceof BigInt64Array || value instanceof BigUint64Array) return Array.from(value, String);
  return value;
}

/** Converts what JSON.stringify writes for `value` under `key`: the result of its toJSON(key), if it has one. */
function convert(value: unknown, key: string, seen: WeakMap<object, unknown>): unknown {
  // A Buffer's toJSON() lists its bytes, never bigints: calling it would only cost a copy.
  if (hasToJSON(value) && !ArrayBuffer.isView(value)) {
    const json = value.toJSON(key);
    const converted = convertContents(json, seen);
    // Without bigints, the object itself (a Date, say) is kept for JSON.stringify to call toJSON() on again.
    return converted === json ? value : converted;
  }
  return convertContents(value, seen);
}

/**
 * Converts `value` itself, without calling its toJSON() (JSON.stringify calls it once per value, not on its result).
 * `seen` maps each object to its converted copy, so an object referenced twice is converted both times.
 */
function convertContents(value: unknown, seen: WeakMap<object, unknown>): unknown {
  const json = bigintJson(value);
  if (json !== value || value === null || typeof value !== 'object') return json;
  // JSON writes a Map or Set as {} and a typed array as its numbers; none of that can hold a bigint.
  if (value instanceof Map || value instanceof Set || ArrayBuffer.isView(value)) return value;
  if (seen.has(value)) return seen.get(value);
  // Until its copy is done, a cycle back to this object gets the object itself.
  seen.set(value, value);
  const source = value as Record<string, unknown>;
  let copy: Record<string, unknown> | undefined;
  for (const key of Array.isArray(value) ? value.keys() : Object.keys(value)) {
    const converted = convert(source[key], String(key), seen);
    if (converted !== source[key]) defineOwn((copy ??= shallowCopy(source)), key, converted);
  }
  seen.set(value, copy ?? value);
  return copy ?? value;
}

/**
 * Copied only once a bigint turns up. An object keeps its prototype, so a class instance stays one: `instanceof` holds
 * and class-transformer's `@Exclude()` still applies when ClassSerializerInterceptor runs after this conversion.
 */
function shallowCopy<T extends object>(value: T): T {
  if (Array.isArray(value)) return value.slice() as T;
  const copy = Object.create(Object.getPrototypeOf(value) as object | null) as T;
  for (const key of Reflect.ownKeys(value)) {
    if (Object.getOwnPropertyDescriptor(value, key)?.enumerable) defineOwn(copy, key, value[key as keyof T]);
  }
  return copy;
}

/**
 * Writes an own data property: never through a setter, so an own `__proto__` key of a parsed JSON body stays a key
 * (an assignment would set the copy's prototype to it and drop the key).
 */
function defineOwn(target: object, key: PropertyKey, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

function hasToJSON(value: unknown): value is { toJSON(key: string): unknown } {
  return typeof (value as { toJSON?: unknown } | null | undefined)?.toJSON === 'function';
}

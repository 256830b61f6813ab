/**
 * A `JSON.stringify` replacer that writes bigints as decimal strings, so IDs reach JavaScript clients exact.
 * Use it with Express: `app.getHttpAdapter().getInstance().set('json replacer', snowflakeJsonReplacer)`.
 *
 * @publicApi
 */
export function snowflakeJsonReplacer(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? value.toString() : value;
}

/**
 * A copy of `value` with every bigint turned into its decimal string; objects with `toJSON` (Dates, Buffers) and
 * values without bigints are left as they are.
 *
 * @publicApi
 */
export function bigintsToStrings<T>(value: T): T {
  return convert(value, new WeakMap()) as T;
}

/** `seen` maps each object to its converted copy, so an object referenced twice is converted both times. */
function convert(value: unknown, seen: WeakMap<object, unknown>): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (value === null || typeof value !== 'object') return value;
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return value;
  if (seen.has(value)) return seen.get(value);
  // Until its copy is done, a cycle back to this object gets the object itself.
  seen.set(value, value);
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const converted = convert(value[i], seen);
      if (converted !== value[i]) (copy ??= value.slice())[i] = converted;
    }
    seen.set(value, copy ?? value);
    return copy ?? value;
  }
  if (value instanceof Map || value instanceof Set || ArrayBuffer.isView(value)) return value;
  let copy: Record<string, unknown> | undefined;
  for (const key of Object.keys(value)) {
    const original = (value as Record<string, unknown>)[key];
    const converted = convert(original, seen);
    if (converted !== original) (copy ??= { ...(value as Record<string, unknown>) })[key] = converted;
  }
  seen.set(value, copy ?? value);
  return copy ?? value;
}

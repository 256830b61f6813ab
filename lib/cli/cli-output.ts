/** Prints rows as an aligned table, or everything as JSON for scripts. */
export function table(rows: Record<string, unknown>[]): string {
  if (rows.length === 0) return '(none)';
  const columns = Object.keys(rows[0]);
  const cells = rows.map((row) => columns.map((column) => text(row[column])));
  const widths = columns.map((column, i) => Math.max(column.length, ...cells.map((row) => row[i].length)));
  const line = (values: string[]) =>
    values
      .map((value, i) => value.padEnd(widths[i]))
      .join('  ')
      .trimEnd();
  return [line(columns), line(widths.map((w) => '-'.repeat(w))), ...cells.map(line)].join('\n');
}

export function json(value: unknown): string {
  const written = JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? v.toString() : v), 2);
  // JSON escapes C0 itself; DEL, C1 and the separators it leaves raw are escaped too (`\u009b` is a CSI).
  return written.replace(/[\u007f-\u009f\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function text(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'string') return printable(value);
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') return value.toString();
  return json(value);
}

/** Anything but printable text: control characters (C0, DEL, C1) and the line and paragraph separators. */
const CONTROL = /[^ -~\u00a0-\u2027\u202a-\uffff]/g;

/**
 * Text from Redis as a terminal shows it safely: a host name or configuration is data anyone with write access to
 * Redis chose, so an escape sequence (a window title, colours, the cursor moved up) or a line break (a forged row)
 * is printed as `\xNN` or `\uNNNN` rather than acted on.
 */
export function printable(value: string): string {
  return value.replace(CONTROL, (c) => {
    const code = c.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

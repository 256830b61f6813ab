/**
 * Pure functions over luaparse's nodes, for the compiler (compile.ts, compile-expressions.ts): what the Lua 5.1
 * compiler folds into constants, which expressions always yield booleans, which function bodies may return other than
 * one value, which expressions are calls and what their arguments are. None of them depends on the compiler's scopes.
 */
import type * as Lua from 'luaparse';
import * as runtime from './runtime.js';

/**
 * The value of an expression the Lua 5.1 compiler folds into a constant (lcode.c, `constfolding`): a numeral, or an
 * arithmetic operator or unary minus on folded operands, unless it divides by zero or gives NaN. Else undefined.
 */
export function foldConstant(node: Lua.Expression): number | undefined {
  if (node.type === 'NumericLiteral') return node.value;
  if (node.type === 'UnaryExpression' && node.operator === '-') {
    const a = foldConstant(node.argument);
    return a === undefined ? undefined : -a;
  }
  if (node.type !== 'BinaryExpression' || !['+', '-', '*', '/', '%', '^'].includes(node.operator)) return undefined;
  const a = foldConstant(node.left);
  const b = foldConstant(node.right);
  if (a === undefined || b === undefined) return undefined;
  if ((node.operator === '/' || node.operator === '%') && b === 0) return undefined;
  const value = foldOperator(node.operator, a, b);
  return Number.isNaN(value) ? undefined : value;
}

function foldOperator(operator: string, a: number, b: number): number {
  switch (operator) {
    case '+':
      return a + b;
    case '-':
      return a - b;
    case '*':
      return a * b;
    case '/':
      return a / b;
    case '%':
      return a - Math.floor(a / b) * b;
    default:
      return runtime.pow(a, b);
  }
}

/** Whether an expression always yields a boolean (so JavaScript's own `!`, `&&` and `||` mean what Lua's do). */
export function isBoolean(node: Lua.Expression): boolean {
  if (node.type === 'BooleanLiteral') return true;
  if (node.type === 'UnaryExpression') return node.operator === 'not';
  if (node.type === 'BinaryExpression') return ['==', '~=', '<', '<=', '>', '>='].includes(node.operator);
  if (node.type === 'LogicalExpression') return isBoolean(node.left) && isBoolean(node.right);
  return false;
}

/**
 * Whether a function body may return other than one value: a list, a call in the last place, a `return` of nothing,
 * or an end that is not a `return` (it returns nothing).
 */
export function returnsMany(body: Lua.Statement[]): boolean {
  let many = body[body.length - 1]?.type !== 'ReturnStatement';
  const visit = (statements: Lua.Statement[]): void => {
    for (const s of statements) {
      if (s.type === 'ReturnStatement') {
        const last = s.arguments[s.arguments.length - 1];
        if (s.arguments.length !== 1 || last.type.endsWith('CallExpression')) many = true;
      } else if (s.type === 'IfStatement') s.clauses.forEach((c) => visit(c.body));
      else if ('body' in s && Array.isArray(s.body) && s.type !== 'FunctionDeclaration') visit(s.body);
    }
  };
  visit(body);
  return many;
}

/** A call's arguments: `f(a, b)`, `f'text'`, `f{...}`. */
export function callArguments(
  node: Lua.CallExpression | Lua.StringCallExpression | Lua.TableCallExpression,
): Lua.Expression[] {
  if (node.type === 'CallExpression') return node.arguments;
  if (node.type === 'StringCallExpression') return [node.argument];
  return [node.arguments];
}

/** Whether an expression is a call: `f(a, b)`, `f'text'`, `f{...}`. */
export function isCall(node: Lua.Expression): boolean {
  return node.type === 'CallExpression' || node.type === 'StringCallExpression' || node.type === 'TableCallExpression';
}

/**
 * The expression half of the Lua compiler (compile.ts holds the design and the statement half): the scopes of local
 * bindings and the temporaries of the function being compiled, and the compilation of every expression to JavaScript
 * that yields one Lua value (or, for a call, every value it gives). A function expression's body is made of
 * statements, so the statement compiler supplies it as {@link ExpressionCompiler.functionBody}.
 */
import type * as Lua from 'luaparse';
import { callArguments, foldConstant, isBoolean, isCall } from './ast.js';
import { LIBRARY } from './library.js';
import { UnsupportedLua } from './unsupported.js';

const GLOBAL_TABLES = new Set(['redis', 'math', 'string', 'table']);

interface Binding {
  readonly js: string;
  /** For a local function: whether it may return more than one value. */
  readonly multi?: boolean;
}

type Scope = Map<string, Binding>;

export abstract class ExpressionCompiler {
  readonly libraryUsed = new Set<string>();
  protected scopes: Scope[] = [];
  private counter = 0;
  protected temps: string[][] = [];
  /** The signs of the zero constants of each function being compiled (see {@link ExpressionCompiler.constant}). */
  protected zeros: Set<string>[] = [];

  libraryAlias(name: string): string {
    return `lib_${name.replace('.', '_')}`;
  }

  /** A function as a JavaScript arrow function. */
  protected abstract functionBody(parameters: Lua.Identifier[], body: Lua.Statement[]): string;

  protected declare(name: string, multi?: boolean): Binding {
    const binding = { js: `${name.replace(/[^A-Za-z0-9_]/g, '_')}$${this.counter++}`, multi };
    this.scopes[this.scopes.length - 1].set(name, binding);
    return binding;
  }

  protected lookup(name: string): Binding | undefined {
    for (let i = this.scopes.length - 1; i >= 0; i--) {
      const found = this.scopes[i].get(name);
      if (found !== undefined) return found;
    }
    return undefined;
  }

  protected temp(): string {
    const name = `$t${this.counter++}`;
    this.temps[this.temps.length - 1].push(name);
    return name;
  }

  /** Arguments or table items: the last one, if a call, spreads all its values. */
  protected spreadList(expressions: Lua.Expression[]): string {
    return expressions
      .map((e, i) =>
        i === expressions.length - 1 && this.mayReturnMany(e)
          ? `...all(${this.call(e as Lua.CallExpression)})`
          : this.expression(e),
      )
      .join(', ');
  }

  /** Whether a call may give more than one value (a local function that never does, or redis.call, do not). */
  protected mayReturnMany(node: Lua.Expression | undefined): boolean {
    if (node === undefined || !isCall(node)) return false;
    const base = (node as Lua.CallExpression).base;
    if (base.type === 'Identifier') {
      const binding = this.lookup(base.name);
      if (binding !== undefined) return binding.multi !== false;
      return false;
    }
    if (base.type === 'MemberExpression' && base.base.type === 'Identifier' && !this.lookup(base.base.name)) {
      return `${base.base.name}.${base.identifier.name}` === 'string.match';
    }
    return true;
  }

  /** A condition as a JavaScript boolean (nil and false are false, everything else true). */
  protected condition(node: Lua.Expression): string {
    const code = this.expression(node);
    if (isBoolean(node)) return code;
    const t = this.temp();
    return `((${t} = ${code}) !== undefined && ${t} !== false)`;
  }

  /** One value. */
  protected expression(node: Lua.Expression): string {
    const folded = foldConstant(node);
    if (folded !== undefined) return this.constant(folded);
    switch (node.type) {
      case 'NilLiteral':
        return 'undefined';
      case 'BooleanLiteral':
        return String(node.value);
      case 'NumericLiteral':
        return `(${String(node.value)})`;
      case 'StringLiteral':
        if (node.value === null) throw new UnsupportedLua('a string literal without a value');
        return JSON.stringify(node.value);
      case 'Identifier':
        return this.identifier(node.name);
      case 'MemberExpression':
        return this.member(node);
      case 'IndexExpression':
        return `index(${this.expression(node.base)}, ${this.expression(node.index)})`;
      case 'CallExpression':
      case 'StringCallExpression':
      case 'TableCallExpression': {
        const code = this.call(node as Lua.CallExpression);
        return this.mayReturnMany(node) ? `first(${code})` : code;
      }
      case 'FunctionDeclaration':
        return `(${this.functionBody(node.parameters as Lua.Identifier[], node.body)})`;
      case 'TableConstructorExpression':
        return this.table(node);
      case 'BinaryExpression':
        return this.binary(node);
      case 'LogicalExpression':
        return this.logical(node);
      case 'UnaryExpression':
        return this.unary(node);
      default:
        throw new UnsupportedLua(`${node.type} is not supported by the simulator's compiled scripts`);
    }
  }

  /**
   * A number the Lua 5.1 compiler makes a constant of its function. Its constants are kept in a table keyed by value,
   * where 0 and -0 are one key: whichever comes first stands for both (`local a = 0; return -0 .. ""` gives "0").
   * Which one comes first is the order of Lua's code generator, not modelled: a function with both is refused.
   */
  private constant(value: number): string {
    if (value === 0) {
      const zeros = this.zeros[this.zeros.length - 1];
      zeros.add(Object.is(value, -0) ? '-0' : '0');
      if (zeros.size > 1)
        throw new UnsupportedLua('the constants 0 and -0 in one function (Lua 5.1 keeps one for both)');
    }
    if (Object.is(value, -0)) return '(-0)';
    return `(${String(value)})`;
  }

  private identifier(name: string): string {
    const binding = this.lookup(name);
    if (binding !== undefined) return binding.js;
    if (name === 'KEYS' || name === 'ARGV') return name;
    if (Object.hasOwn(LIBRARY, name)) {
      this.libraryUsed.add(name);
      return this.libraryAlias(name);
    }
    throw new UnsupportedLua(`the global '${name}' (not in the simulator's library, or not a value by itself)`);
  }

  private member(node: Lua.MemberExpression): string {
    if (node.indexer !== '.') throw new UnsupportedLua('method calls (a:b())');
    if (node.base.type === 'Identifier' && !this.lookup(node.base.name) && GLOBAL_TABLES.has(node.base.name)) {
      const name = `${node.base.name}.${node.identifier.name}`;
      if (name === 'redis.call') return 'redisCall';
      if (!Object.hasOwn(LIBRARY, name)) throw new UnsupportedLua(`'${name}' (not in the simulator's library)`);
      this.libraryUsed.add(name);
      return this.libraryAlias(name);
    }
    return `index(${this.expression(node.base)}, ${JSON.stringify(node.identifier.name)})`;
  }

  /** A call, every value it gives (a LuaMulti when several). */
  protected call(node: Lua.CallExpression): string {
    const args = callArguments(node);
    const list = this.spreadList(args);
    const base = node.base;
    const direct =
      (base.type === 'Identifier' && this.lookup(base.name) === undefined) ||
      (base.type === 'MemberExpression' && base.base.type === 'Identifier' && !this.lookup(base.base.name));
    if (direct) return `${this.expression(base)}(${list})`;
    return `call(${this.expression(base)}${list ? `, ${list}` : ''})`;
  }

  private table(node: Lua.TableConstructorExpression): string {
    const positional = node.fields.filter((f) => f.type === 'TableValue');
    const keyed = node.fields.filter((f) => f.type !== 'TableValue');
    const array = `new LuaTable([${this.spreadList(positional.map((f) => f.value))}])`;
    if (keyed.length === 0) return array;
    const t = this.temp();
    const sets = keyed.map((f) => {
      const key = f.type === 'TableKeyString' ? JSON.stringify(f.key.name) : this.expression(f.key);
      return `${t}.set(${key}, ${this.expression(f.value)})`;
    });
    return `(${t} = ${array}, ${sets.join(', ')}, ${t})`;
  }

  private binary(node: Lua.BinaryExpression): string {
    const a = this.expression(node.left);
    const b = this.expression(node.right);
    switch (node.operator) {
      case '+':
        return `add(${a}, ${b})`;
      case '-':
        return `sub(${a}, ${b})`;
      case '*':
        return `mul(${a}, ${b})`;
      case '/':
        return `div(${a}, ${b})`;
      case '%':
        return `mod(${a}, ${b})`;
      case '^':
        return `pow(${a}, ${b})`;
      case '..':
        return `concat(${a}, ${b})`;
      case '==':
        return `(${a} === ${b})`;
      case '~=':
        return `(${a} !== ${b})`;
      case '<':
        return `lt(${a}, ${b})`;
      case '<=':
        return `le(${a}, ${b})`;
      // Lua evaluates the left operand first here too; only the comparison is turned round.
      case '>': {
        const [x, y] = [this.temp(), this.temp()];
        return `(${x} = ${a}, ${y} = ${b}, lt(${y}, ${x}))`;
      }
      case '>=': {
        const [x, y] = [this.temp(), this.temp()];
        return `(${x} = ${a}, ${y} = ${b}, le(${y}, ${x}))`;
      }
      default:
        throw new UnsupportedLua(`the operator ${node.operator}`);
    }
  }

  /** `and`/`or` give one of their operands, as Lua's do (not a boolean unless both are). */
  private logical(node: Lua.LogicalExpression): string {
    const a = this.expression(node.left);
    const b = this.expression(node.right);
    if (isBoolean(node.left)) return node.operator === 'and' ? `(${a} && ${b})` : `(${a} || ${b})`;
    const t = this.temp();
    const falsy = `(${t} = ${a}) === undefined || ${t} === false`;
    return node.operator === 'and' ? `(${falsy} ? ${t} : ${b})` : `(${falsy} ? ${b} : ${t})`;
  }

  private unary(node: Lua.UnaryExpression): string {
    const a = this.expression(node.argument);
    switch (node.operator) {
      case 'not': {
        if (isBoolean(node.argument)) return `!${a}`;
        const t = this.temp();
        return `((${t} = ${a}) === undefined || ${t} === false)`;
      }
      case '-':
        return `neg(${a})`;
      case '#':
        return `length(${a})`;
      default:
        throw new UnsupportedLua(`the operator ${node.operator as string}`);
    }
  }
}

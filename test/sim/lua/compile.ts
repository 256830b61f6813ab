/**
 * Lua 5.1 scripts compiled to JavaScript functions, for the simulator's Redis model: the lease's own scripts, parsed
 * by luaparse and turned into JavaScript with Lua's semantics kept by runtime.ts (types checked by every operator,
 * `and`/`or` yielding their operands, multiple values expanded only where Lua expands them). Compiled once per
 * script text, a script then runs at the speed of ordinary JavaScript, where a Lua VM written in JavaScript
 * (fengari, kept as the reference: `SIM_LUA=fengari`) interprets it instruction by instruction.
 *
 * The language covered is what Redis scripts can use, less what the lease's scripts never use: everything but
 * varargs, method calls (`a:b()`), `goto` and global assignment (Redis refuses globals anyway); library functions in
 * library.ts. Anything outside it is refused at compile time with an error that names it. One difference is not
 * detected: parentheses around a call (`(f())`) keep one value in Lua, and luaparse drops them; none of the scripts
 * does that with a call that returns several values.
 *
 * Equality with Redis is tested, not assumed: lua-semantics.e2e-spec.ts runs generated scripts of the covered
 * language on this and on a real redis-server, the model-equivalence test runs its traces against a real
 * redis-server with both this and fengari, and the simulator's determinism test runs schedules with both.
 *
 * The compiler is in three files: this one, with compileLua and the statements; compile-expressions.ts, the base
 * class with the scopes, the temporaries and the expressions; ast.ts, the pure functions over luaparse's nodes.
 */
import luaparse from 'luaparse';
import type * as Lua from 'luaparse';
import { isCall, returnsMany } from './ast.js';
import { ExpressionCompiler } from './compile-expressions.js';
import { LIBRARY } from './library.js';
import * as runtime from './runtime.js';
import { UnsupportedLua } from './unsupported.js';

/** A compiled script: `KEYS`, `ARGV` and `redis.call`, its return value as a Lua value. */
export type CompiledScript = (
  keys: runtime.LuaTable,
  argv: runtime.LuaTable,
  redisCall: (...args: unknown[]) => unknown,
) => unknown;

export { UnsupportedLua };

export function compileLua(source: string): CompiledScript {
  const chunk = luaparse.parse(source, { luaVersion: '5.1', encodingMode: 'pseudo-latin1', comments: false });
  const compiler = new Compiler();
  const body = compiler.functionBlock([], chunk.body).block;
  const library = [...compiler.libraryUsed].map(
    (name) => `const ${compiler.libraryAlias(name)} = lib[${JSON.stringify(name)}];`,
  );
  const code = [
    '"use strict";',
    `const { ${RUNTIME_NAMES.join(', ')} } = rt;`,
    ...library,
    `return (KEYS, ARGV, redisCall) => ${body};`,
  ].join('\n');
  // The point of the compiler: the script's code, made once, runs as JavaScript.
  // eslint-disable-next-line @typescript-eslint/no-implied-eval
  return new Function('rt', 'lib', code)(runtime, LIBRARY) as CompiledScript;
}

const RUNTIME_NAMES = [
  'LuaTable',
  'LuaMulti',
  'NONE',
  'first',
  'all',
  'add',
  'sub',
  'mul',
  'div',
  'mod',
  'neg',
  'pow',
  'concat',
  'lt',
  'le',
  'length',
  'index',
  'setIndex',
  'call',
  'forNumber',
  'arithmetic',
];

class Compiler extends ExpressionCompiler {
  /** A function as a JavaScript arrow function. */
  protected functionBody(parameters: Lua.Identifier[], body: Lua.Statement[]): string {
    const { params, block } = this.functionBlock(parameters, body);
    return `(${params.join(', ')}) => ${block}`;
  }

  /** A function's parameters and its block (the chunk is a function): its temporaries, its statements. */
  functionBlock(parameters: Lua.Identifier[], body: Lua.Statement[]): { params: string[]; block: string } {
    this.temps.push([]);
    this.zeros.push(new Set());
    this.scopes.push(new Map());
    const params = parameters.map((p) => this.declare(p.name).js);
    const statements = this.block(body, false);
    this.scopes.pop();
    this.zeros.pop();
    const temps = this.temps.pop()!;
    const declared = temps.length > 0 ? `let ${temps.join(', ')};\n` : '';
    // Falling off the end returns no value.
    return { params, block: `{\n${declared}${statements}return NONE;\n}` };
  }

  private block(statements: Lua.Statement[], scoped = true): string {
    if (scoped) this.scopes.push(new Map());
    const out = statements.map((s) => this.statement(s)).join('');
    if (scoped) this.scopes.pop();
    return out;
  }

  private statement(node: Lua.Statement): string {
    switch (node.type) {
      case 'LocalStatement':
        return this.local(node);
      case 'AssignmentStatement':
        return this.assignment(node);
      case 'CallStatement':
        return `${this.call(node.expression as Lua.CallExpression)};\n`;
      case 'FunctionDeclaration':
        return this.functionStatement(node);
      case 'IfStatement':
        return this.ifStatement(node);
      case 'WhileStatement':
        return `while (${this.condition(node.condition)}) {\n${this.block(node.body)}}\n`;
      case 'RepeatStatement': {
        // The condition sees the body's locals: one scope for both.
        this.scopes.push(new Map());
        const body = this.block(node.body, false);
        const until = this.condition(node.condition);
        this.scopes.pop();
        return `for (;;) {\n${body}if (${until}) break;\n}\n`;
      }
      case 'DoStatement':
        return `{\n${this.block(node.body)}}\n`;
      case 'ForNumericStatement':
        return this.forNumeric(node);
      case 'ForGenericStatement':
        return this.forGeneric(node);
      case 'ReturnStatement':
        return `return ${this.returned(node.arguments)};\n`;
      case 'BreakStatement':
        return 'break;\n';
      default:
        throw new UnsupportedLua(`${node.type} is not supported by the simulator's compiled scripts`);
    }
  }

  private local(node: Lua.LocalStatement): string {
    const values = this.valueList(node.init, node.variables.length);
    // A local that holds a function as it is declared gives what the function's returns give; any other may
    // hold anything.
    const names = node.variables.map((v, i) => {
      const init = node.init[i];
      return this.declare(v.name, init?.type === 'FunctionDeclaration' ? returnsMany(init.body) : undefined).js;
    });
    return `${values.setup}let ${names.map((n, i) => `${n} = ${values.items[i]}`).join(', ')};\n${values.rest}`;
  }

  private assignment(node: Lua.AssignmentStatement): string {
    const values = this.valueList(node.init, node.variables.length);
    if (node.variables.length === 1)
      return `${values.setup}${this.store(node.variables[0], values.items[0])}${values.rest}`;
    // As Lua 5.1 runs `a, t[i] = x, y`: the tables and keys of the targets first, then every value, then the stores
    // from the last target to the first (`a, a = 1, 2` leaves 1; `i, t[i] = i + 1, 20` sets t at the old i).
    const targets = node.variables.map((v) => this.target(v));
    const temps = values.items.map((item) => {
      const t = this.temp();
      return { t, code: `${t} = ${item};\n` };
    });
    return (
      targets.map((x) => x.setup).join('') +
      values.setup +
      temps.map((x) => x.code).join('') +
      values.rest +
      targets
        .map((x, i) => x.store(temps[i].t))
        .reverse()
        .join('')
    );
  }

  /** An assignment's target, its table and key evaluated now, stored to later. */
  private target(target: Lua.Expression): { setup: string; store: (value: string) => string } {
    if (target.type === 'Identifier') return { setup: '', store: (value) => this.store(target, value) };
    const [table, key] = [this.temp(), this.temp()];
    let setup: string;
    if (target.type === 'IndexExpression') {
      setup = `${table} = ${this.expression(target.base)}; ${key} = ${this.expression(target.index)};\n`;
    } else if (target.type === 'MemberExpression' && target.indexer === '.') {
      setup = `${table} = ${this.expression(target.base)}; ${key} = ${JSON.stringify(target.identifier.name)};\n`;
    } else throw new UnsupportedLua(`assignment to a ${target.type}`);
    return { setup, store: (value) => `setIndex(${table}, ${key}, ${value});\n` };
  }

  private store(target: Lua.Expression, value: string): string {
    if (target.type === 'Identifier') {
      const binding = this.lookup(target.name);
      if (binding === undefined)
        throw new UnsupportedLua(`assignment to the global '${target.name}' (Redis refuses it)`);
      // Its calls were compiled as giving one value, which another function may not.
      if (binding.multi === false) throw new UnsupportedLua(`assignment to '${target.name}', a local function`);
      return `${binding.js} = ${value};\n`;
    }
    if (target.type === 'IndexExpression') {
      return `setIndex(${this.expression(target.base)}, ${this.expression(target.index)}, ${value});\n`;
    }
    if (target.type === 'MemberExpression' && target.indexer === '.') {
      return `setIndex(${this.expression(target.base)}, ${JSON.stringify(target.identifier.name)}, ${value});\n`;
    }
    throw new UnsupportedLua(`assignment to a ${target.type}`);
  }

  /**
   * `count` values from a list of expressions, as Lua adjusts them: the last expression, if a call, gives as many as
   * are missing; missing ones are nil; expressions beyond `count` are still evaluated.
   */
  private valueList(expressions: Lua.Expression[], count: number): { setup: string; items: string[]; rest: string } {
    const items: string[] = [];
    let setup = '';
    let rest = '';
    expressions.forEach((e, i) => {
      const last = i === expressions.length - 1;
      if (i >= count) {
        rest += `${isCall(e) ? this.call(e as Lua.CallExpression) : this.expression(e)};\n`;
      } else if (last && count > expressions.length && this.mayReturnMany(e)) {
        const t = this.temp();
        setup += `${t} = all(${this.call(e as Lua.CallExpression)});\n`;
        for (let k = 0; i + k < count; k++) items.push(`${t}[${k}]`);
      } else {
        items.push(this.expression(e));
      }
    });
    while (items.length < count) items.push('undefined');
    return { setup, items, rest };
  }

  private functionStatement(node: Lua.FunctionDeclaration): string {
    if (!node.isLocal || node.identifier === null || node.identifier.type !== 'Identifier') {
      throw new UnsupportedLua('a global function (Redis refuses globals)');
    }
    // Declared before its body, so that it can call itself.
    const binding = this.declare(node.identifier.name, returnsMany(node.body));
    return `let ${binding.js} = ${this.functionBody(node.parameters as Lua.Identifier[], node.body)};\n`;
  }

  private ifStatement(node: Lua.IfStatement): string {
    return node.clauses
      .map((clause, i) => {
        const body = `{\n${this.block(clause.body)}}`;
        if (clause.type === 'ElseClause') return ` else ${body}`;
        return `${i === 0 ? 'if' : ' else if'} (${this.condition(clause.condition)}) ${body}`;
      })
      .join('')
      .concat('\n');
  }

  private forNumeric(node: Lua.ForNumericStatement): string {
    const [start, limit, step, i] = [this.temp(), this.temp(), this.temp(), this.temp()];
    const setup =
      `${start} = forNumber(${this.expression(node.start)}, 'initial value');\n` +
      `${limit} = forNumber(${this.expression(node.end)}, 'limit');\n` +
      `${step} = ${node.step ? `forNumber(${this.expression(node.step)}, 'step')` : '1'};\n`;
    this.scopes.push(new Map());
    const variable = this.declare(node.variable.name).js;
    const body = this.block(node.body);
    this.scopes.pop();
    const test = node.step ? `(${step} > 0 ? ${i} <= ${limit} : ${i} >= ${limit})` : `${i} <= ${limit}`;
    // As Lua 5.1 counts: from start - step, adding the step before each test, so the first value is
    // (start - step) + step (`for i = 0.1, 1` starts at 0.09999999999999998). The variable is a copy of the count,
    // which the body may change without changing the count.
    return (
      `${setup}for (${i} = ${start} - ${step}; (${i} += ${step}), ${test}; ) {\n` +
      `let ${variable} = ${i};\n${body}}\n`
    );
  }

  private forGeneric(node: Lua.ForGenericStatement): string {
    const values = this.valueList(node.iterators, 3);
    const [f, s, control, r] = [this.temp(), this.temp(), this.temp(), this.temp()];
    this.scopes.push(new Map());
    const names = node.variables.map((v) => this.declare(v.name).js);
    const body = this.block(node.body);
    this.scopes.pop();
    const bind = names
      .map((n, k) => `let ${n} = ${k === 0 ? `first(${r})` : `(${r} instanceof LuaMulti ? ${r}[${k}] : undefined)`};`)
      .join('\n');
    return (
      `${values.setup}${f} = ${values.items[0]}; ${s} = ${values.items[1]}; ${control} = ${values.items[2]};\n${values.rest}` +
      `for (;;) {\n${r} = call(${f}, ${s}, ${control});\n${bind}\nif (${names[0]} === undefined) break;\n` +
      `${control} = ${names[0]};\n${body}}\n`
    );
  }

  /** A return's values: one as it is (a call's every value), several as a LuaMulti. */
  private returned(expressions: Lua.Expression[]): string {
    if (expressions.length === 0) return 'NONE';
    if (expressions.length === 1) {
      const [only] = expressions;
      return isCall(only) ? this.call(only as Lua.CallExpression) : this.expression(only);
    }
    return `LuaMulti.of(${this.spreadList(expressions)})`;
  }
}

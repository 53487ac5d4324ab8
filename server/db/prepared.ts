import type { CompiledQuery, Compilable, Kysely, QueryResult, RootOperationNode } from 'kysely';
import type { Mode, Tables } from './schema.js';
import type { Db, Executor } from './store.js';

/**
 * Hot queries built and compiled once. Building and compiling a Kysely query costs several times
 * what SQLite takes to run it (measured on a key lookup: 78 us built each time, 15 us from a
 * compiled query, 10 us raw), and a payment runs a dozen of them. A `Prepared` query is written
 * with the same typed builder; each argument is a placeholder that compiles to a parameter, and
 * the compiled SQL is kept per dialect, so only the parameter values change between calls.
 *
 * Arguments must reach the SQL as bound parameters, unchanged (plain values in `where`, `values`,
 * `set`, `limit`); a builder that looked inside one (say, to skip an `undefined` column) would see
 * the placeholder. Queries whose shape depends on their input stay ordinary builder calls.
 */
export type Arg = <K extends string, T>(name: K) => T;

interface Compiled {
  readonly sql: string;
  readonly query: RootOperationNode;
  readonly isSelect: boolean;
  /** For each bound parameter: the argument it takes, an item of a list argument, or a constant the builder added. */
  readonly slots: readonly ({ arg: string } | { list: string; index: number } | { value: unknown })[];
  /** For a statement with named positions (`Prepared`'s `positions`): each argument slot's position in it (-1 for a constant or a list item). */
  readonly at: readonly number[] | undefined;
}

const MARK = '\u0000pos-arg:';
/** A list item's placeholder: `${LIST_MARK}${index}:${name}`. */
const LIST_MARK = '\u0000pos-list:';

function slotOf(parameter: unknown): Compiled['slots'][number] {
  if (typeof parameter !== 'string') return { value: parameter };
  if (parameter.startsWith(MARK)) return { arg: parameter.slice(MARK.length) };
  if (parameter.startsWith(LIST_MARK)) {
    const rest = parameter.slice(LIST_MARK.length);
    const colon = rest.indexOf(':');
    return { list: rest.slice(colon + 1), index: Number(rest.slice(0, colon)) };
  }
  return { value: parameter };
}

/** Placeholders for the first `length` items of the list argument `name`. */
function listPlaceholders(name: string, length: number): never[] {
  return Array.from({ length }, (_, i) => `${LIST_MARK}${i}:${name}` as never);
}

/**
 * Runs a read at once on the database itself, or answers undefined when it can't now. SQLite's
 * single connection registers one (see `openSqliteStore`): outside a write transaction a read can
 * run synchronously, skipping the driver's connection lock and its promises, which cost a GET more
 * than the read itself. Inside one it would see uncommitted writes, so it declines and the read
 * queues behind the transaction as before.
 */
export type DirectReader = (sql: string, parameters: readonly unknown[]) => unknown[] | undefined;

const directReaders = new WeakMap<object, DirectReader>();

export function registerDirectReads(db: Db, read: DirectReader): void {
  directReaders.set(db, read);
}

/**
 * Runs any statement at once on the connection a unit of work holds, answering as the driver
 * would. SQLite's group commit registers one for each unit while it runs (`directStatements` in
 * sqlite.ts): the unit is the only user of the connection then, so a statement needs none of the
 * driver's connection lock and promises (the webhook worker, whose units run many statements each,
 * delivered 5.8 % more a second without them).
 */
export type UnitStatements = (sql: string, parameters: readonly unknown[]) => QueryResult<unknown>;

const unitStatements = new WeakMap<object, UnitStatements>();

/** `trx`'s statements run through `run` until the returned function is called (the unit ended). */
export function runUnitStatements(trx: object, run: UnitStatements): () => void {
  unitStatements.set(trx, run);
  return () => void unitStatements.delete(trx);
}

export class Prepared<A extends object, R> {
  readonly #build: (db: Db, arg: <K extends keyof A & string>(name: K) => A[K]) => Compilable<R>;
  /** By the executor's adapter: one compilation per dialect (and per open database). */
  readonly #compiled = new WeakMap<object, Compiled>();
  /** The argument names `executeAt` takes values for, in order (a shaped statement's columns). */
  readonly #positions: readonly string[] | undefined;

  constructor(build: (db: Db, arg: <K extends keyof A & string>(name: K) => A[K]) => Compilable<R>, positions?: readonly string[]) {
    this.#build = build;
    this.#positions = positions;
  }

  #compile(db: Executor): Compiled {
    const adapter = db.getExecutor().adapter;
    let compiled = this.#compiled.get(adapter);
    if (!compiled) {
      const query = this.#build(db, (name) => `${MARK}${name}` as never).compile();
      const slots = query.parameters.map(slotOf);
      const positions = this.#positions;
      compiled = {
        sql: query.sql,
        query: query.query,
        isSelect: query.query.kind === 'SelectQueryNode',
        slots,
        at: positions && slots.map((slot) => ('arg' in slot ? positions.indexOf(slot.arg) : -1)),
      };
      this.#compiled.set(adapter, compiled);
    }
    return compiled;
  }

  /**
   * `lists` holds the list arguments of a query built with list placeholders (`PreparedLists`,
   * `insertRows`); an item past a list's end takes the list's last item.
   */
  async execute(db: Executor, args: A, lists?: Readonly<Record<string, readonly unknown[]>>): Promise<QueryResult<R>> {
    const { sql, query, slots, isSelect } = this.#compile(db);
    const parameters = slots.map((slot) => {
      if ('value' in slot) return slot.value;
      let value: unknown;
      if ('list' in slot) {
        const items = lists?.[slot.list];
        value = items?.[Math.min(slot.index, items.length - 1)];
      } else value = (args as Record<string, unknown>)[slot.arg];
      if (value === undefined) throw new Error(`prepared query: no value for ${'arg' in slot ? slot.arg : slot.list}`);
      return value;
    });
    return this.#run(db, sql, query, isSelect, parameters);
  }

  /**
   * `execute` with the values of the statement's `positions`, in their order: no object of named
   * arguments made and read back per call, which for a payment's 60-column row showed in a create's
   * profile.
   */
  async executeAt(db: Executor, values: readonly unknown[]): Promise<QueryResult<R>> {
    const { sql, query, slots, isSelect, at } = this.#compile(db);
    if (!at) throw new Error('prepared query: executeAt needs a statement made with positions');
    const parameters = new Array<unknown>(slots.length);
    for (let i = 0; i < slots.length; i++) {
      const slot = slots[i]!;
      if ('value' in slot) {
        parameters[i] = slot.value;
        continue;
      }
      const value = values[at[i]!];
      if (value === undefined) throw new Error(`prepared query: no value for ${'arg' in slot ? slot.arg : slot.list}`);
      parameters[i] = value;
    }
    return this.#run(db, sql, query, isSelect, parameters);
  }

  #run(db: Executor, sql: string, query: RootOperationNode, isSelect: boolean, parameters: readonly unknown[]): Promise<QueryResult<R>> {
    const unit = unitStatements.get(db);
    if (unit) {
      try {
        return Promise.resolve(unit(sql, parameters) as QueryResult<R>);
      } catch (error) {
        return Promise.reject(error);
      }
    }
    if (isSelect) {
      const rows = directReaders.get(db)?.(sql, parameters);
      if (rows) return Promise.resolve({ rows: rows as R[] });
    }
    return db.executeQuery<R>({ sql, query, parameters, queryId: { queryId: '' } } as CompiledQuery<R>);
  }

  async first(db: Executor, args: A): Promise<R | undefined> {
    return (await this.execute(db, args)).rows[0];
  }

  /** Rows an UPDATE, DELETE or INSERT touched. */
  async affected(db: Executor, args: A): Promise<number> {
    return Number((await this.execute(db, args)).numAffectedRows ?? 0n);
  }
}

/**
 * Statements whose shape is a table and some column names (a row insert, an update by equality, a
 * scoped lookup): one compiled statement per shape, kept for the life of the process. Arguments
 * are named after their role and column (`v:amount`, `w:id`), so one column can be both set and
 * matched.
 */
const byShape = new Map<string, Prepared<Record<string, unknown>, unknown>>();

function shaped<R>(key: string, build: (db: Db, arg: (name: string) => never) => Compilable<R>, positions?: () => readonly string[]): Prepared<Record<string, unknown>, R> {
  let prepared = byShape.get(key) as Prepared<Record<string, unknown>, R> | undefined;
  if (!prepared) {
    prepared = new Prepared<Record<string, unknown>, R>((db, arg) => build(db, arg as (name: string) => never), positions?.());
    byShape.set(key, prepared as Prepared<Record<string, unknown>, unknown>);
  }
  return prepared;
}

function definedColumns(values: Record<string, unknown>): string[] {
  return Object.keys(values).filter((column) => values[column] !== undefined);
}

/** Inserts one row; rows of the same columns share a compiled statement. */
export async function insertRow<T extends keyof Tables & string>(db: Executor, table: T, row: Tables[T]): Promise<void> {
  const values = row as unknown as Record<string, unknown>;
  const columns = definedColumns(values);
  const insert = shaped<never>(
    `insert\u0000${table}\u0000${columns.join(',')}`,
    (d, arg) => d.insertInto(table).values(Object.fromEntries(columns.map((c) => [c, arg(`v:${c}`)])) as never),
    () => columns.map((c) => `v:${c}`),
  );
  await insert.executeAt(db, columns.map((c) => values[c]));
}

/** `UPDATE table SET … WHERE` every column of `where` equals its value; returns the rows changed. */
export async function updateRows<T extends keyof Tables & string>(db: Executor, table: T, set: Partial<Tables[T]>, where: Partial<Tables[T]>): Promise<number> {
  const values = set as Record<string, unknown>;
  const matches = where as Record<string, unknown>;
  const columns = definedColumns(values);
  const keys = definedColumns(matches);
  const update = shaped<never>(`update\u0000${table}\u0000${columns.join(',')}\u0000${keys.join(',')}`, (d, arg) => {
    // The table's column names are only known as strings here; the caller's types checked them.
    const untyped = d as unknown as Kysely<Record<string, Record<string, unknown>>>;
    let query = untyped.updateTable(table as string).set(Object.fromEntries(columns.map((c) => [c, arg(`v:${c}`)])));
    for (const key of keys) query = query.where(key, '=', arg(`w:${key}`));
    return query;
  }, () => [...columns.map((c) => `v:${c}`), ...keys.map((k) => `w:${k}`)]);
  const args = columns.map((c) => values[c]);
  for (const key of keys) args.push(matches[key]);
  return Number((await update.executeAt(db, args)).numAffectedRows ?? 0n);
}

/** Tables whose rows belong to one merchant and mode. */
export type ScopedTable = { [T in keyof Tables]: Tables[T] extends { merchant_id: string; mode: Mode } ? T : never }[keyof Tables];

/**
 * The row of `table` inside the merchant's scope whose `column` equals `value`, or undefined: the
 * one lookup behind every "by uuid or reference" read. `lock` adds FOR UPDATE (PostgreSQL only).
 */
export async function findScoped<T extends ScopedTable>(
  db: Executor,
  table: T,
  scope: { merchantId: string; mode: Mode },
  column: keyof Tables[T] & string,
  value: string,
  lock = false,
): Promise<Tables[T] | undefined> {
  const find = shaped<Tables[T]>(`find\u0000${table}\u0000${column}\u0000${lock}`, (d, arg) => {
    const untyped = d as unknown as Kysely<Record<string, Record<string, unknown>>>;
    const query = untyped.selectFrom(table as string).selectAll().where('merchant_id', '=', arg('w:merchant_id')).where('mode', '=', arg('w:mode')).where(column, '=', arg('w:value'));
    return (lock ? query.forUpdate() : query) as unknown as Compilable<Tables[T]>;
  });
  return find.first(db, { 'w:merchant_id': scope.merchantId, 'w:mode': scope.mode, 'w:value': value });
}

/**
 * The length a bound list is compiled for: the next power of two. A list bound one parameter per
 * item (`IN (…)`, the rows of a multi-row INSERT) makes a new SQL text for every length, and with
 * it a new Kysely compilation and a new SQLite statement; rounded up, a list of up to 512 items
 * takes one of ten lengths, each compiled once.
 */
export function listLength(n: number): number {
  let length = 1;
  while (length < n) length *= 2;
  return length;
}

/**
 * A `Prepared` query with lists in it, compiled once per rounded length of each list. Each list is
 * padded by repeating its last item, which an `IN` list matches no more rows for; a list must not
 * be empty (`IN ()` is no SQL) and must be one an `IN` takes: rows to insert go to `insertRows`.
 */
export class PreparedLists<A extends object, L extends string, R> {
  readonly #build: (db: Db, arg: <K extends keyof A & string>(name: K) => A[K], list: (name: L) => never[]) => Compilable<R>;
  /** By the rounded length of each list. */
  readonly #byLengths = new Map<string, Prepared<A, R>>();

  constructor(build: (db: Db, arg: <K extends keyof A & string>(name: K) => A[K], list: (name: L) => never[]) => Compilable<R>) {
    this.#build = build;
  }

  async execute(db: Executor, args: A, lists: Readonly<Record<L, readonly unknown[]>>): Promise<QueryResult<R>> {
    let key = '';
    for (const name of Object.keys(lists).sort() as L[]) {
      const items = lists[name];
      if (items.length === 0) throw new Error(`prepared query: the list ${name} is empty`);
      key += `${name}:${listLength(items.length)},`;
    }
    let prepared = this.#byLengths.get(key);
    if (!prepared) {
      prepared = new Prepared<A, R>((d, arg) => this.#build(d, arg, (name) => listPlaceholders(name, listLength(lists[name].length))));
      this.#byLengths.set(key, prepared);
    }
    return prepared.execute(db, args, lists);
  }

  /** Rows an UPDATE, DELETE or INSERT touched. */
  async affected(db: Executor, args: A, lists: Readonly<Record<L, readonly unknown[]>>): Promise<number> {
    return Number((await this.execute(db, args, lists)).numAffectedRows ?? 0n);
  }
}

/**
 * Rows per multi-row INSERT at most: 128 rows of 15 columns bind 1,920 parameters, far below
 * SQLite's limit (32,766) and PostgreSQL's (65,535).
 */
const INSERT_ROWS = 128;

/**
 * Inserts rows of the same columns in few statements: in chunks whose sizes are powers of two (a
 * hundred rows go as 64 + 32 + 4), so each chunk size is compiled once.
 */
export async function insertRows<T extends keyof Tables & string>(db: Executor, table: T, rows: readonly Tables[T][]): Promise<void> {
  if (rows.length === 0) return;
  const columns = definedColumns(rows[0] as unknown as Record<string, unknown>);
  let done = 0;
  while (done < rows.length) {
    const left = rows.length - done;
    let size = Math.min(INSERT_ROWS, listLength(left));
    if (size > left) size /= 2;
    const chunk = rows.slice(done, done + size) as unknown as Record<string, unknown>[];
    const insert = shaped<never>(`insert\u0000${table}\u0000${columns.join(',')}\u0000${size}`, (d) => {
      const placeholders = columns.map((c) => listPlaceholders(c, size));
      return d.insertInto(table).values(Array.from({ length: size }, (_, i) => Object.fromEntries(columns.map((c, j) => [c, placeholders[j]![i]]))) as never);
    });
    // One list per column: the statement takes row i's value of column c as item i of list c.
    await insert.execute(db, {}, Object.fromEntries(columns.map((c) => [c, chunk.map((row) => row[c])])));
    done += size;
  }
}

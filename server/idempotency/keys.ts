import { inTrace, noTelemetry, traced, type Telemetry } from '../operations/observe.js';
import { context, trace, type Context, type Span } from '@opentelemetry/api';
import { timeOrderedUuid } from '../../shared/ids.js';
import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { Clock } from '../../shared/time.js';
import { insertRow, Prepared, updateRows } from '../db/prepared.js';
import type { IdempotencyKeysTable, Mode } from '../db/schema.js';
import type { Executor, Store, Trx } from '../db/store.js';
import { ApiError, conflict, unavailable } from '../errors.js';
import type { Leases, Presence } from '../db/leases.js';
import type { Scope } from '../accounts/scope.js';
import { bindOrigin, parseStoredOrigin, type RequestOrigin, storedOrigin } from '../audit/origin.js';
import { packJson, unpackJson } from '../db/packed-json.js';
import { answeredObjectId, factsOf, recordAudit } from '../audit/log.js';
import { recoveryDelay, recoveryExhausted } from './recovery-schedule.js';
import type { FieldCipher, SealedColumn } from '../db/encryption.js';

/**
 * Idempotent requests as named recovery points (after brandur's rocket-rides-atomic). A request
 * is a chain of steps; each step either does atomic database work and records where the request
 * now stands in the same transaction, or calls the processor (with a key derived from ours) and
 * hands its result to the next atomic step. A crash anywhere leaves a recovery point from which a
 * retry, or the recovery pass, carries on without doing anything twice.
 *
 * A request made with an API key (its scope carries the origin) is written to the audit trail in
 * the transaction that stores its final answer: exactly once, with that answer's status, however
 * many retries it took, and never for a replay. Each unit of work it runs is bound to that origin,
 * so events its steps and their listeners write name the request (server/audit/origin.ts).
 *
 * Steps speak the domain: a request ends in its operation's outcome (what it made, or what became
 * of it) or in a refusal (an ApiError). The operation's presenter turns the outcome into the answer
 * the key keeps, once, in the transaction that ends the request; a retry replays that answer as it
 * was first sent (spec §8) and never presents again.
 */

/** The answer a key keeps: an HTTP status and the JSON body, as first sent. */
export interface FinalResponse {
  status: number;
  body: unknown;
  /** The body as stored JSON text, on a replay: sent as it is, without parsing it and writing it again. */
  readonly text?: string;
}

/**
 * How a request ended. A refusal returned by a step keeps the database work of its commit (a
 * refund that failed at the processor stays failed); one thrown rolls that work back.
 */
export type Ending<O> = { readonly outcome: O } | { readonly refusal: ApiError };

/** What a step comes to: the next recovery point with the state it carries, or the request's end. */
export type StepResult<S, O> = { next: string; state: S } | Ending<O>;

export interface StepContext<S, O> {
  readonly scope: Scope;
  /** The idempotency key (the client's, or an internal one for unkeyed requests). */
  readonly key: string;
  readonly clientSupplied: boolean;
  /** Runs database work and records the result it returns, in one transaction. */
  commit(work: (trx: Trx) => Promise<StepResult<S, O>>): Promise<StepResult<S, O>>;
}

export type Step<S, O> = (state: S, ctx: StepContext<S, O>) => Promise<StepResult<S, O>>;

/** The answer a refusal keeps: its status and Stripe's error body (spec §7). */
export function refusalAnswer(error: ApiError): FinalResponse {
  return { status: error.status, body: error.toBody() };
}

export interface Operation<S, O> {
  readonly name: string;
  /**
   * `started` is the entry point; `finished` is reserved. `started` must do nothing but read before
   * its first `commit` (no processor call, no write): a new key is claimed by that commit itself,
   * one durable commit fewer per request. Two requests racing with one key both run the reads; the
   * one whose commit inserts the key second is rolled back whole and waits for, or replays, the first.
   */
  readonly steps: Readonly<Record<string, Step<S, O>>>;
  /**
   * The presenter: the answer the key keeps for an outcome, given the state of the step that ended
   * the request. Refusals are answered by `refusalAnswer`.
   */
  readonly present: (outcome: O, state: S) => FinalResponse;
  /**
   * Ends a request whose failures ran past the retry cap (server/idempotency/recovery-schedule.ts):
   * database work that leaves what the request made in a final state, and how the request ended.
   * Without it the request is refused with `retriesExhausted()`.
   */
  readonly giveUp?: (state: S, trx: Trx, at: GiveUpContext) => Promise<Ending<O>>;
  /**
   * Whether the request names a customer's details (a receipt email): its state and its answer are
   * then kept sealed (server/db/encryption.ts). Asked of the state the request started with.
   */
  readonly personal?: (state: S) => boolean;
}

export interface GiveUpContext {
  readonly scope: Scope;
  /** The recovery point the request could not get past. */
  readonly point: string;
}

/** The refusal of a request given up after its retries, when its operation has no better ending. */
export function retriesExhausted(): ApiError {
  return unavailable('The request was given up after repeated failures reaching the payment processor; send it again with a new Idempotency-Key', 'retries_exhausted');
}

/**
 * What an idempotent request came to. `response` is the answer the key keeps and replays as it was
 * first given (spec §8): the HTTP edge sends it. The request that ran the operation also has its
 * `ending`, for the domain to read (a checkout session reads the payment it made); a replay has
 * only the stored answer.
 */
export type ExecuteResult<S = unknown, O = unknown> = {
  readonly response: FinalResponse;
  /** The operation's state as its last step left it (what it made, by id). */
  readonly state: S;
} & (
  /** The stored answer of an earlier request with the same key. */
  | { readonly replayed: true }
  | { readonly replayed: false; readonly ending: Ending<O> }
);


const FINISHED = 'finished';

/**
 * A request holding a key is presumed alive this long. It must outlast the slowest processor call
 * with its retries (20 s timeout × 3 attempts), so a live request is never taken over; after it,
 * a retry or the recovery pass resumes the work of a request whose process died.
 */
export const LOCK_TIMEOUT_MS = 75_000;

/**
 * Replayed answers kept unpacked. A replay is a client retrying one key, usually a few times within
 * seconds; a thousand answers of ~1 KB cover every key retried at once on an instance for a few MB.
 * Past it the set starts over.
 */
const REPLAYED_ANSWERS_KEPT = 1_000;

/** How long a duplicate waits for the first request with its key before answering 409. */
const WAIT_FOR_FIRST_MS = 30_000;
/** Poll interval while waiting on a request running in another process. */
const WAIT_POLL_MS = 20;

/** Spec §8 asks for at least 24 h; Stripe keeps keys 24 h too. */
export const DEFAULT_KEY_TTL_MS = 24 * 60 * 60 * 1000;

/** Expired keys removed per sweep, so one sweep never holds the write lock for long. */
const PURGE_BATCH = 1_000;

/** A unique-constraint violation, from either database. */
export function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown };
  return e?.code === '23505' || e?.code === 'SQLITE_CONSTRAINT_UNIQUE' || e?.code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

const keyRow = new Prepared<{ merchantId: string; mode: Mode; key: string }, IdempotencyKeysTable>((db, arg) =>
  db.selectFrom('idempotency_keys').selectAll().where('merchant_id', '=', arg('merchantId')).where('mode', '=', arg('mode')).where('key', '=', arg('key')),
);

/** This request's insert of a new key lost to another request's: the other one runs the key. */
class LostClaim extends Error {
  constructor() {
    super('another request claimed this idempotency key first');
  }
}

/** What a key row records: the next recovery point with its state, or the final answer. */
type KeyRecord = { next: string; state: unknown } | { final: FinalResponse };

type Claim = { kind: 'run'; row: IdempotencyKeysTable } | { kind: 'replay'; row: IdempotencyKeysTable } | { kind: 'wait'; row: IdempotencyKeysTable };

export class IdempotencyService {
  readonly #operations = new Map<string, Operation<unknown, unknown>>();
  /** Requests running in this process, by key row id, so duplicates here wait without polling. */
  readonly #inflight = new Map<string, Promise<unknown>>();
  /** Stored answers already unpacked, by key row id (`#answerText`). */
  readonly #answers = new Map<string, { stored: string; text: string }>();

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly ttlMs: number = DEFAULT_KEY_TTL_MS,
    /** Tells whether the instance holding a lock is alive; without it only LOCK_TIMEOUT_MS frees a lock. */
    private readonly leases?: Leases,
    /** Compresses the recovery backoff and age limit; below 1 only in tests. */
    private readonly recoveryScale: number = 1,
    /** Seals the state and answer of requests that name a customer's details; required by operations that can. */
    private readonly cipher?: FieldCipher,
    /** Spans for each operation and step; counts of recoveries and give-ups. */
    private readonly telemetry: Pick<Telemetry, 'metrics' | 'tracer'> = noTelemetry,
    /** Keeps this instance counted alive while it holds locks, where no background loop does (the api role). */
    private readonly presence?: Presence,
  ) {}

  /** Stored text of a key row's column: packed (server/db/packed-json.ts), then sealed when the request is personal. */
  #seal(rowId: string, column: SealedColumn, text: string, personal: boolean): string {
    const packed = packJson(text);
    if (!personal) return packed;
    if (!this.cipher) throw new Error('an idempotent request that names a customer\'s details needs the store\'s cipher');
    return this.cipher.seal(column, rowId, packed);
  }

  /** A key row's column as the JSON text it was given, opened when it was sealed and unpacked. */
  #open(rowId: string, column: SealedColumn, stored: string): string {
    return unpackJson(this.cipher ? this.cipher.open(column, rowId, stored) : stored);
  }

  /**
   * A finished key's stored answer as JSON text. Finished rows never change, so the text unpacked
   * for one replay serves the next ones of the same key (a client retrying in a loop), as long as
   * the stored column still reads the same. Sealed answers (they name a customer's details) are
   * opened every time rather than kept in the clear in memory.
   */
  #answerText(rowId: string, stored: string): string {
    const kept = this.#answers.get(rowId);
    if (kept && kept.stored === stored) return kept.text;
    const opened = this.cipher ? this.cipher.open('idempotency_keys.response_body', rowId, stored) : stored;
    const text = unpackJson(opened);
    if (opened === stored) {
      if (this.#answers.size >= REPLAYED_ANSWERS_KEPT) this.#answers.clear();
      this.#answers.set(rowId, { stored, text });
    }
    return text;
  }

  #stateOf(row: IdempotencyKeysTable): unknown {
    return row.state === null ? null : JSON.parse(this.#open(row.id, 'idempotency_keys.state', row.state));
  }

  #isPersonal(operation: Operation<unknown, unknown> | undefined, initialState: unknown): boolean {
    return operation?.personal?.(initialState) ?? false;
  }

  register<S, O>(operation: Operation<S, O>): void {
    this.#operations.set(operation.name, operation as unknown as Operation<unknown, unknown>);
  }

  async execute<S, O>(scope: Scope, operation: Operation<S, O>, clientKey: string | undefined, initialState: S): Promise<ExecuteResult<S, O>> {
    if (!this.presence) return this.#execute(scope, operation, clientKey, initialState);
    const release = await this.presence.hold();
    try {
      return await this.#execute(scope, operation, clientKey, initialState);
    } finally {
      release();
    }
  }

  async #execute<S, O>(scope: Scope, operation: Operation<S, O>, clientKey: string | undefined, initialState: S): Promise<ExecuteResult<S, O>> {
    // Time-ordered like the row's id: the key index grows at its end (shared/ids.ts).
    const key = clientKey ?? `auto_${timeOrderedUuid()}`;
    // From here the engine writes this request's audit entry (or none, for a replay): not the edge.
    if (scope.origin && !scope.origin.nested) scope.origin.engine = true;
    // The key the engine runs under is the request's idempotency key (the header, or the legacy body field).
    const origin: RequestOrigin | undefined = scope.origin && !scope.origin.nested ? { ...scope.origin, idempotencyKey: clientKey ?? null } : scope.origin;
    // A key seen before: a finished one is answered from what it stored, without a transaction
    // (finished rows never change); an unfinished one takes the claim path below.
    const existing = clientKey === undefined ? undefined : await this.#find(this.store.db, scope, key);
    if (existing?.recovery_point === FINISHED) return this.#replay<S>(existing);
    if (!existing) {
      try {
        const fresh = this.#freshRow(scope, operation, key, clientKey !== undefined, initialState, origin, false);
        return (await this.#drive(fresh, true, origin, scope.trace, { state: initialState })) as ExecuteResult<S, O>;
      } catch (err) {
        // Another request inserted this key first: wait for it or replay it, as below.
        if (!(err instanceof LostClaim)) throw err;
      }
    }
    const deadline = this.clock.now() + WAIT_FOR_FIRST_MS;
    for (;;) {
      const claim = await this.#claim(scope, operation, key, clientKey !== undefined, initialState, origin).catch((err: unknown) => {
        // Another instance inserted the same key between our read and our insert: it runs, we wait.
        if (isUniqueViolation(err)) return undefined;
        throw err;
      });
      if (!claim) continue;
      if (claim.kind === 'replay') return this.#replay<S>(claim.row);
      if (claim.kind === 'run') {
        // The request that produces the first final answer is not a replay, even when it resumed
        // the work of an earlier attempt: that attempt never got an answer.
        return (await this.#drive(claim.row, false, origin, scope.trace)) as ExecuteResult<S, O>;
      }
      if (this.clock.now() > deadline) {
        throw conflict('idempotency_key_in_use', 'A request with this Idempotency-Key is still being processed; retry later');
      }
      await this.#waitFor(claim.row.id);
    }
  }

  async #claim<S, O>(scope: Scope, operation: Operation<S, O>, key: string, clientSupplied: boolean, initialState: S, origin: RequestOrigin | undefined): Promise<Claim> {
    return inTrace(scope.trace, () => this.store.transaction(async (trx) => {
      const now = this.clock.now();
      const row = await this.#find(trx, scope, key);
      if (!row) {
        const fresh = this.#freshRow(scope, operation, key, clientSupplied, initialState, origin);
        await trx.insertInto('idempotency_keys').values(fresh).execute();
        return { kind: 'run', row: fresh };
      }
      if (row.recovery_point === FINISHED) return { kind: 'replay', row };
      if (this.#inflight.has(row.id)) return { kind: 'wait', row };
      if (row.locked_at !== null && now - row.locked_at < LOCK_TIMEOUT_MS) {
        // A fresh lock is honoured unless its instance is gone (killed mid-request): then it is taken over at once.
        const holder = row.locked_by;
        const alive = holder === null || !this.leases || holder === this.leases.holder || (await this.leases.isAlive(holder, trx));
        if (alive) return { kind: 'wait', row };
      }
      // Abandoned by a request that failed or died: resume it (spec §8 rule 4: a key always
      // yields the result of the operation it was first used for, whatever this request asked).
      const taken = await trx
        .updateTable('idempotency_keys')
        .set({ locked_at: now, locked_by: this.leases?.holder ?? null, updated_at: now })
        .where('id', '=', row.id)
        .where('recovery_point', '=', row.recovery_point)
        .executeTakeFirst();
      if (Number(taken.numUpdatedRows) !== 1) return { kind: 'wait', row };
      return { kind: 'run', row: { ...row, locked_at: now } };
    }));
  }

  #find(db: Executor, scope: Scope, key: string): Promise<IdempotencyKeysTable | undefined> {
    return keyRow.first(db, { merchantId: scope.merchantId, mode: scope.mode, key });
  }

  /**
   * A key row as a request that runs it now holds it, at the start of its operation. `packState`
   * false leaves its state column null for the row's first record to fill (`#run`): the first step
   * usually records a state of its own, and packing the initial one would be thrown away.
   */
  #freshRow<S, O>(scope: Scope, operation: Operation<S, O>, key: string, clientSupplied: boolean, initialState: S, origin: RequestOrigin | undefined, packState = true): IdempotencyKeysTable {
    const now = this.clock.now();
    const id = timeOrderedUuid();
    return {
      id,
      merchant_id: scope.merchantId,
      mode: scope.mode,
      key,
      client_supplied: clientSupplied ? 1 : 0,
      operation: operation.name,
      recovery_point: 'started',
      state: packState ? this.#seal(id, 'idempotency_keys.state', JSON.stringify(initialState), this.#isPersonal(operation as unknown as Operation<unknown, unknown>, initialState)) : null,
      locked_at: now,
      locked_by: this.leases?.holder ?? null,
      response_status: null,
      response_body: null,
      created_at: now,
      updated_at: now,
      expires_at: now + this.ttlMs,
      attempts: 0,
      next_attempt_at: null,
      request_id: scope.requestId ?? null,
      // Kept as plain JSON: it is cleared when the request finishes (#recordFields), mostly in the
      // same transaction or the next, so deflating it would cost CPU and save no lasting bytes.
      // Rows packed before still read (unpackJson passes plain text through).
      origin: storedOrigin(origin),
    };
  }

  #replay<S>(row: IdempotencyKeysTable): ExecuteResult<S, never> {
    const stateOf = (): S => this.#stateOf(row) as S;
    let state: { value: S } | undefined;
    // The state is opened only if someone reads it: the HTTP edge sends the stored answer alone.
    return {
      response: this.#stored(row),
      replayed: true,
      get state(): S {
        return (state ??= { value: stateOf() }).value;
      },
    };
  }

  #stored(row: IdempotencyKeysTable): FinalResponse {
    const status = Number(row.response_status ?? 500);
    if (row.response_body === null) return { status, body: null };
    const text = this.#answerText(row.id, row.response_body);
    let parsed: unknown;
    // Parsed only if someone looks (a replayed create that is not plainly an object; tests).
    return {
      status,
      text,
      get body(): unknown {
        return (parsed ??= JSON.parse(text) as unknown);
      },
    };
  }

  async #waitFor(rowId: string): Promise<void> {
    const running = this.#inflight.get(rowId);
    if (running) {
      await running.catch(() => undefined);
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, WAIT_POLL_MS));
  }

  /**
   * `unsaved`: the row is not in the database yet; the first record inserts it (the claim).
   * `origin`: the request driving it now; the recovery pass drives it for the request that started it.
   * `parent`: the trace context of the request driving it; none for the recovery pass, whose run is a trace of its own.
   * `initial`: an unsaved row's state, in memory (its column is filled by the first record).
   */
  async #drive(row: IdempotencyKeysTable, unsaved = false, origin: RequestOrigin | undefined = parseStoredOrigin(row.origin === null ? null : unpackJson(row.origin)), parent?: Context, initial?: { state: unknown }): Promise<ExecuteResult> {
    const operation = this.#operations.get(row.operation);
    if (!operation) throw new Error(`no idempotent operation named ${row.operation}`);
    const run = traced(this.telemetry.tracer, `idempotency ${row.operation}`, (span) => this.#run(operation, row, unsaved, origin, span, span ? trace.setSpan(parent ?? context.active(), span) : undefined, initial), {
      attributes: { 'pos.operation': row.operation, 'pos.recovery_point': row.recovery_point },
      parent,
      leaf: true,
    });
    this.#inflight.set(row.id, run);
    try {
      return await run;
    } finally {
      this.#inflight.delete(row.id);
    }
  }

  /**
   * `traceContext`: the operation span's context, entered again at each async boundary the engine
   * owns (each step's call, each unit of work) and carried on the steps' scope for theirs.
   */
  async #run(
    operation: Operation<unknown, unknown>,
    row: IdempotencyKeysTable,
    unsaved: boolean,
    origin: RequestOrigin | undefined,
    span: Span | undefined,
    traceContext: Context | undefined,
    initial: { state: unknown } | undefined,
  ): Promise<ExecuteResult> {
    const scope: Scope = { merchantId: row.merchant_id, mode: row.mode, ...(origin ? { origin } : {}), ...(traceContext ? { trace: traceContext } : {}) };
    let point = row.recovery_point;
    let state: unknown = initial ? initial.state : this.#stateOf(row);
    // Decided once, on the state the request started with: its input does not change.
    const personal = this.#isPersonal(operation, state);
    // Records where the request stands; while the row is unsaved, inserting it is the claim, and
    // losing that insert to another request with the same key means this request never ran. An
    // ending is presented here, once, and its answer writes the request's audit entry with it,
    // last in the transaction (server/audit/log.ts).
    const save = async (trx: Trx, result: StepResult<unknown, unknown>, stepState: unknown): Promise<FinalResponse | undefined> => {
      const record: KeyRecord = 'next' in result ? result : { final: this.#answer(operation, result, stepState) };
      if (!unsaved) await this.#record(trx, row, record, personal);
      else {
        const fields = this.#recordFields(row, record, personal);
        // A row whose state column was left to its first record: the record's state, or, when the
        // first step already ends the request, the state the request started with.
        const initialState = row.state === null && fields.state === undefined ? this.#seal(row.id, 'idempotency_keys.state', JSON.stringify(stepState), personal) : row.state;
        try {
          await insertRow(trx, 'idempotency_keys', { ...row, state: initialState, ...fields });
        } catch (err) {
          throw isUniqueViolation(err) ? new LostClaim() : err;
        }
      }
      if (!('final' in record)) return undefined;
      await this.#audit(trx, scope, origin, record.final);
      return record.final;
    };
    const unit = <T>(work: (trx: Trx) => Promise<T>): Promise<T> =>
      inTrace(traceContext, () =>
        this.store.transaction((trx) => {
          bindOrigin(trx, origin);
          return work(trx);
        }),
      );
    for (;;) {
      const step = operation.steps[point];
      if (!step) throw new Error(`operation ${operation.name} has no step ${point}`);
      let recorded = false;
      let answer: FinalResponse | undefined;
      const stepState = state;
      const ctx: StepContext<unknown, unknown> = {
        scope,
        key: row.key,
        clientSupplied: row.client_supplied === 1,
        commit: (work) =>
          unit(async (trx) => {
            const result = await work(trx);
            answer = await save(trx, result, stepState);
            recorded = true;
            return result;
          }),
      };
      let result: StepResult<unknown, unknown>;
      try {
        // Each recovery point an event on the operation's span, not a span of its own: a span per
        // step doubled the spans of a create, and what runs inside a step is its processor call
        // and database units, which are the operation's children either way.
        if (span?.isRecording()) span.addEvent(`step ${point}`);
        result = await inTrace(traceContext, () => step(stepState, ctx));
      } catch (err) {
        if (err instanceof LostClaim) throw err;
        if (err instanceof ApiError && err.status >= 400 && err.status < 500 && err.status !== 429) {
          // A business refusal is the request's end, kept like a success.
          const ending = { refusal: err };
          const response = await unit((trx) => save(trx, ending, stepState));
          return { response: response ?? refusalAnswer(err), replayed: false, state, ending };
        }
        // Our failure or the processor's, perhaps passing: no answer is kept, so a retry (or the
        // recovery pass, after a backoff) resumes from this point, until the cap gives it up.
        if (unsaved) throw err;
        const given = await this.#failedAttempt(operation, row, point, state, err, origin, personal);
        if (given) return { ...given, replayed: false, state };
        throw err;
      }
      if (!recorded) answer = await unit((trx) => save(trx, result, stepState));
      unsaved = false;
      if (!('next' in result)) return { response: answer ?? this.#answer(operation, result, stepState), replayed: false, state, ending: result };
      point = result.next;
      state = result.state;
    }
  }

  /** The answer a request's ending keeps: its operation presents an outcome; a refusal is its error body. */
  #answer(operation: Operation<unknown, unknown>, ending: Ending<unknown>, state: unknown): FinalResponse {
    return 'refusal' in ending ? refusalAnswer(ending.refusal) : operation.present(ending.outcome, state);
  }

  /**
   * Counts a failed attempt. Below the cap: unlocks the key and sets when the recovery pass may try
   * again. At the cap: gives the request up, keeping the answer to its operation's ending, and says
   * so in one log line naming the request that started it.
   */
  async #failedAttempt(
    operation: Operation<unknown, unknown>,
    row: IdempotencyKeysTable,
    point: string,
    state: unknown,
    err: unknown,
    origin: RequestOrigin | undefined,
    personal: boolean,
  ): Promise<{ response: FinalResponse; ending: Ending<unknown> } | undefined> {
    const now = this.clock.now();
    const attempts = Number(row.attempts ?? 0) + 1;
    const context = { key_id: row.id, key: row.client_supplied === 1 ? row.key : undefined, request_id: row.request_id, operation: row.operation, point, attempts };
    if (!recoveryExhausted({ attempts, createdAt: row.created_at, now, scale: this.recoveryScale })) {
      const nextAttemptAt = now + recoveryDelay(attempts, this.recoveryScale);
      await updateRows(this.store.db, 'idempotency_keys', { locked_at: null, attempts, next_attempt_at: nextAttemptAt, updated_at: now }, { id: row.id });
      this.logger.warn({ ...context, err, next_attempt_at: new Date(nextAttemptAt).toISOString() }, 'an idempotent request failed; it will be tried again');
      return undefined;
    }
    const scope: Scope = { merchantId: row.merchant_id, mode: row.mode, ...(origin ? { origin } : {}) };
    const given = await this.store
      .transaction(async (trx) => {
        bindOrigin(trx, origin);
        const ending: Ending<unknown> = operation.giveUp ? await operation.giveUp(state, trx, { scope, point }) : { refusal: retriesExhausted() };
        const response = this.#answer(operation, ending, state);
        await updateRows(trx, 'idempotency_keys', { ...this.#recordFields(row, { final: response }, personal), attempts, next_attempt_at: null }, { id: row.id });
        await this.#audit(trx, scope, origin, response);
        return { response, ending };
      })
      .catch((giveUpErr: unknown) => {
        // The key stays locked until LOCK_TIMEOUT_MS, then the next attempt gives it up again.
        this.logger.error({ ...context, err: giveUpErr, cause: err }, 'giving up an idempotent request failed');
        throw giveUpErr;
      });
    this.telemetry.metrics.givenUp(operation.name);
    this.logger.error({ ...context, err, status: given.response.status }, 'an idempotent request was given up after its retries; its key keeps the final answer');
    return given;
  }

  /**
   * The columns that record a recovery point, or the final answer, on a key row. A request sent
   * without an Idempotency-Key ran under a key nobody else knows, so nothing can ever replay its
   * answer: its row keeps the status, not the body (a pack per keyless create, and its bytes, spared).
   */
  #recordFields(row: Pick<IdempotencyKeysTable, 'id' | 'client_supplied'>, record: KeyRecord, personal: boolean): Partial<IdempotencyKeysTable> {
    const now = this.clock.now();
    const rowId = row.id;
    if ('final' in record) {
      const body = row.client_supplied === 1 ? this.#seal(rowId, 'idempotency_keys.response_body', JSON.stringify(record.final.body), personal) : null;
      // The origin only tells the recovery pass whose work it finishes, the lock's holder whose lock
      // it is, and the request id which request a give-up's log line names: a finished request
      // needs none of them, and a day of keys is spared keeping them.
      return { recovery_point: FINISHED, response_status: record.final.status, response_body: body, locked_at: null, locked_by: null, updated_at: now, origin: null, request_id: null };
    }
    return { recovery_point: record.next, state: this.#seal(rowId, 'idempotency_keys.state', JSON.stringify(record.state), personal), updated_at: now };
  }

  async #record(trx: Trx, row: Pick<IdempotencyKeysTable, 'id' | 'client_supplied'>, record: KeyRecord, personal: boolean): Promise<void> {
    await updateRows(trx, 'idempotency_keys', this.#recordFields(row, record, personal), { id: row.id });
  }

  /**
   * The audit entry of a request that came to its final answer. Requests without a key's origin
   * have none, and work nested in another change of the request leaves the entry to that change.
   */
  async #audit(trx: Trx, scope: Scope, origin: RequestOrigin | undefined, final: FinalResponse): Promise<void> {
    if (!origin || origin.nested) return;
    await recordAudit(trx, scope, factsOf(origin, { status: final.status, objectId: answeredObjectId(final.status, final.body) }), this.clock.now());
  }

  /**
   * Finishes requests left half-done by a crash or a processor outage. `includeLocked` is for
   * start-up on the embedded store, where no other process can be holding a lock.
   */
  /**
   * Whether a request under this key has run or runs now: its retry is answered as it was, so a
   * check made before the operation (a reader's presence, say) must not refuse it.
   */
  async known(scope: Scope, clientKey: string): Promise<boolean> {
    const row = await this.store.db
      .selectFrom('idempotency_keys')
      .select('id')
      .where('merchant_id', '=', scope.merchantId)
      .where('mode', '=', scope.mode)
      .where('key', '=', clientKey)
      .executeTakeFirst();
    return row !== undefined;
  }

  async recover(options: { includeLocked?: boolean; limit?: number } = {}): Promise<number> {
    const now = this.clock.now();
    // The unfinished points by name (not `!= finished`), so the pass is an index range over the few
    // open requests rather than a scan of a day's worth of finished keys.
    const open = [...new Set([...this.#operations.values()].flatMap((op) => Object.keys(op.steps)))];
    if (open.length === 0) return 0;
    let query = this.store.db
      .selectFrom('idempotency_keys')
      .selectAll()
      .where('recovery_point', 'in', open)
      // Said outright, as the partial index `idempotency_keys_open` is written, so both databases use it.
      .where('recovery_point', '<>', sql.lit(FINISHED))
      .where('operation', 'in', [...this.#operations.keys()])
      // Backoff after a failed attempt (recovery-schedule.ts): not before it is due.
      .where((eb) => eb.or([eb('next_attempt_at', 'is', null), eb('next_attempt_at', '<=', now)]));
    if (!options.includeLocked) {
      query = query.where((eb) => eb.or([eb('locked_at', 'is', null), eb('locked_at', '<', now - LOCK_TIMEOUT_MS)]));
    }
    const rows = await query.limit(options.limit ?? 100).execute();
    let finished = 0;
    for (const row of rows) {
      if (this.#inflight.has(row.id)) continue;
      const taken = await this.store.transaction(async (trx) => {
        const result = await trx
          .updateTable('idempotency_keys')
          .set({ locked_at: this.clock.now(), locked_by: this.leases?.holder ?? null })
          .where('id', '=', row.id)
          .where('recovery_point', '=', row.recovery_point)
          .executeTakeFirst();
        return Number(result.numUpdatedRows) === 1;
      });
      if (!taken) continue;
      try {
        await this.#drive({ ...row, locked_at: now });
        finished += 1;
        this.telemetry.metrics.recovered(row.operation);
      } catch (err) {
        // A failed attempt was logged, and scheduled or given up, where it failed.
        this.logger.debug({ err, key_id: row.id, operation: row.operation, point: row.recovery_point }, 'recovery of an idempotent request failed');
      }
    }
    return finished;
  }

  /** Deletes finished keys past their retention. */
  async purgeExpired(): Promise<number> {
    const now = this.clock.now();
    const expired = await this.store.db
      .selectFrom('idempotency_keys')
      .select('id')
      .where('expires_at', '<', now)
      .where('recovery_point', '=', FINISHED)
      .limit(PURGE_BATCH)
      .execute();
    if (expired.length === 0) return 0;
    await this.store.db
      .deleteFrom('idempotency_keys')
      .where(
        'id',
        'in',
        expired.map((r) => r.id),
      )
      .execute();
    return expired.length;
  }
}

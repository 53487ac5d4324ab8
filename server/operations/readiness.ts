import type { Logger } from 'pino';
import { migrationsCurrent, ping, type Db } from '../db/store.js';
import { ProcessorFailure } from '../processor/errors.js';
import type { ProcessorIdentity } from '../processor/port.js';

/**
 * Whether this instance should be sent traffic (`GET /readyz`), as opposed to whether it is alive
 * (`GET /healthz`): the database answers, it holds exactly this version's migrations, the processor
 * answered its last check, and the server is not draining. A load balancer takes an instance out on
 * 503 and puts it back on 200; a supervisor restarts on liveness only, so a processor outage never
 * turns into a restart loop (docs/operations.md).
 */

/**
 * How often the processor is checked in the background. Fifteen seconds puts an outage on /readyz
 * within a load balancer's usual two or three probes, at four reads a minute against a read budget
 * of 100 a second.
 */
export const PROCESSOR_CHECK_MS = 15_000;

/** A check gets this long: a probe waits for /readyz, and a database that takes longer is not fit to serve. */
const CHECK_TIMEOUT_MS = 2_000;

export interface ReadinessReport {
  ready: boolean;
  checks: { database: 'ok' | 'unreachable'; migrations: 'current' | 'pending' | 'unknown'; processor: 'ok' | 'unreachable' | 'unchecked'; draining: boolean };
  /** Why it is not ready, in words, one per failed check. */
  reasons: string[];
}

export interface ReadinessDeps {
  db: Db;
  /** The PostgreSQL schema the migrations' bookkeeping is in (unset: the connection's own). */
  schema?: string | undefined;
  /** Null for an instance that makes no processor calls. */
  processor: Pick<ProcessorIdentity, 'ping'> | null;
  logger: Logger;
  checkEveryMs?: number;
}

export class Readiness {
  readonly #deps: ReadinessDeps;
  #draining = false;
  /** Once current, they stay so for this process: migrations only move forward, at start. */
  #migrationsCurrent = false;
  #processor: { ok: boolean; reason?: string } | undefined;
  #timer: NodeJS.Timeout | undefined;
  #checking: Promise<void> | undefined;

  constructor(deps: ReadinessDeps) {
    this.#deps = deps;
  }

  /** Checks the processor now and then every `checkEveryMs`; the first result is what the promise waits for. */
  start(): Promise<void> {
    if (!this.#deps.processor) return Promise.resolve();
    const first = this.refreshProcessor();
    this.#timer = setInterval(() => void this.refreshProcessor(), this.#deps.checkEveryMs ?? PROCESSOR_CHECK_MS);
    this.#timer.unref();
    return first;
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** From now on not ready: the server is closing and wants no new traffic. */
  drain(): void {
    this.#draining = true;
  }

  get draining(): boolean {
    return this.#draining;
  }

  /** Reads the processor once; a check already running is joined rather than doubled. */
  refreshProcessor(): Promise<void> {
    const processor = this.#deps.processor;
    if (!processor) return Promise.resolve();
    this.#checking ??= withTimeout(processor.ping(), CHECK_TIMEOUT_MS * 2)
      .then(
        () => {
          if (this.#processor && !this.#processor.ok) this.#deps.logger.info('the processor answers again');
          this.#processor = { ok: true };
        },
        (err: unknown) => {
          // Any answer but an outage proves it reachable: a 429 is the processor answering.
          if (err instanceof ProcessorFailure && err.kind !== 'connection' && err.kind !== 'api' && err.kind !== 'credentials') {
            this.#processor = { ok: true };
            return;
          }
          const reason = err instanceof Error ? err.message : String(err);
          if (this.#processor?.ok !== false) this.#deps.logger.warn({ err }, 'the processor is unreachable: /readyz answers 503');
          this.#processor = { ok: false, reason };
        },
      )
      .finally(() => {
        this.#checking = undefined;
      });
    return this.#checking;
  }

  async check(): Promise<ReadinessReport> {
    const reasons: string[] = [];
    let database: ReadinessReport['checks']['database'] = 'ok';
    let migrations: ReadinessReport['checks']['migrations'] = 'unknown';
    try {
      await withTimeout(ping(this.#deps.db), CHECK_TIMEOUT_MS);
      if (!this.#migrationsCurrent) this.#migrationsCurrent = await withTimeout(migrationsCurrent(this.#deps.db, this.#deps.schema), CHECK_TIMEOUT_MS);
      migrations = this.#migrationsCurrent ? 'current' : 'pending';
      if (!this.#migrationsCurrent) reasons.push("the database does not hold exactly this version's migrations");
    } catch (err) {
      database = 'unreachable';
      reasons.push(`the database is unreachable: ${err instanceof Error ? err.message : String(err)}`);
    }
    let processor: ReadinessReport['checks']['processor'] = 'ok';
    if (this.#deps.processor) {
      if (!this.#processor) {
        processor = 'unchecked';
        reasons.push('the processor has not been checked yet');
      } else if (!this.#processor.ok) {
        processor = 'unreachable';
        reasons.push(`the processor is unreachable: ${this.#processor.reason ?? 'no answer'}`);
      }
    }
    if (this.#draining) reasons.push('the server is draining: it is shutting down');
    return { ready: reasons.length === 0, checks: { database, migrations, processor, draining: this.#draining }, reasons };
  }
}

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

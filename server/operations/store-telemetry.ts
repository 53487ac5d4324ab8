import { context, SpanKind, trace } from '@opentelemetry/api';
import type { Store, Trx } from '../db/store.js';
import { noMetrics } from './metrics.js';
import { traced, type Telemetry } from './observe.js';

/**
 * Every unit of work on `store` timed (commit or rollback) and, when traces are exported, a
 * `db.transaction` span, the child of whatever step or request opened it: the one active when the
 * unit starts (an operation's units are started in its context: server/idempotency/keys.ts). A unit
 * started with no span active (a background loop's, or one after an `await` that left the context
 * behind) makes no span: a trace of one unit on its own says nothing its histogram does not, and
 * would cost a span and an export. Wrapped once where the server is put together, so no domain
 * module has to remember it; with telemetry off nothing is wrapped.
 */
export function instrumentTransactions(store: Store, telemetry: Pick<Telemetry, 'metrics' | 'tracer'>): void {
  const { metrics, tracer } = telemetry;
  if (metrics === noMetrics && !tracer) return;
  const transaction = store.transaction.bind(store);
  const dialect = store.dialect;
  store.transaction = <T>(work: (trx: Trx) => Promise<T>): Promise<T> =>
    traced(
      tracer && trace.getSpan(context.active()) ? tracer : undefined,
      'db.transaction',
      () => {
        const started = performance.now();
        const timed = (outcome: 'commit' | 'rollback') => metrics.transaction(dialect, outcome, (performance.now() - started) / 1000);
        // Chained rather than awaited in an async wrapper: one promise fewer per unit of work.
        let running: Promise<T>;
        try {
          running = transaction(work);
        } catch (err) {
          running = Promise.reject(err as Error);
        }
        return running.then(
          (result) => {
            timed('commit');
            return result;
          },
          (err: unknown) => {
            timed('rollback');
            throw err;
          },
        );
      },
      { kind: SpanKind.CLIENT, attributes: { 'db.system': dialect }, leaf: true },
    );
}

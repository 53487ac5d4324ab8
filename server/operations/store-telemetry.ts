import { SpanKind } from '@opentelemetry/api';
import type { Store, Trx } from '../db/store.js';
import { noMetrics } from './metrics.js';
import { traced, type Telemetry } from './observe.js';

/**
 * Every unit of work on `store` timed (commit or rollback) and, when traces are exported, a
 * `db.transaction` span, the child of whatever step or request opened it. Wrapped once where the
 * server is put together, so no domain module has to remember it; with telemetry off nothing is wrapped.
 */
export function instrumentTransactions(store: Store, telemetry: Pick<Telemetry, 'metrics' | 'tracer'>): void {
  const { metrics, tracer } = telemetry;
  if (metrics === noMetrics && !tracer) return;
  const transaction = store.transaction.bind(store);
  const dialect = store.dialect;
  store.transaction = <T>(work: (trx: Trx) => Promise<T>): Promise<T> =>
    traced(
      tracer,
      'db.transaction',
      async () => {
        const started = performance.now();
        try {
          const result = await transaction(work);
          metrics.transaction(dialect, 'commit', (performance.now() - started) / 1000);
          return result;
        } catch (err) {
          metrics.transaction(dialect, 'rollback', (performance.now() - started) / 1000);
          throw err;
        }
      },
      { kind: SpanKind.CLIENT, attributes: { 'db.system': dialect } },
    );
}

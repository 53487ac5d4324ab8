import { expressServer } from '../../shared/express-server.js';
import type { AddressInfo } from 'node:net';
import express from 'express';
import type { Db } from '../db/store.js';
import { operationsRouter, type OperationsRoutesDeps } from '../http/operations.js';

/**
 * The operator's own listener (`--metrics-listen`, POS_METRICS_LISTEN): /metrics without a token,
 * /readyz and /healthz, and nothing else, on an address the public never reaches (loopback, or a
 * management network a Prometheus scrapes).
 */
export async function listenForOperators(at: { host: string; port: number }, deps: OperationsRoutesDeps): Promise<{ url: string; close(): Promise<void> }> {
  const app = express();
  app.disable('x-powered-by');
  app.use(operationsRouter(deps));
  app.use((_req, res) => {
    res.status(404).json({ error: { type: 'invalid_request_error', message: 'This listener serves /metrics, /readyz and /healthz only' } });
  });
  const server = expressServer(app);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(at.port, at.host, () => resolve());
  });
  const host = at.host.includes(':') ? `[${at.host}]` : at.host;
  const url = `http://${host}:${(server.address() as AddressInfo).port}`;
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** Readers online by mode, as their agents report them: the gauge an operator watches for a shop gone dark. */
export async function readersOnline(db: Db): Promise<{ mode: string; count: number }[]> {
  const rows = await db
    .selectFrom('terminal_readers')
    .select((eb) => ['mode', eb.fn.countAll<number | string | bigint>().as('count')])
    .where('status', '=', 'online')
    .groupBy('mode')
    .execute();
  return rows.map((r) => ({ mode: r.mode, count: Number(r.count) }));
}

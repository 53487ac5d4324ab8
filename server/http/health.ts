import express, { type Router } from 'express';
import { ping, type Store } from '../db/store.js';

/**
 * The operational endpoints every role serves: `GET /healthz` (liveness: the process answers and
 * its database does). The API's app and the worker's operations app both mount this one router, so
 * what a load balancer or systemd probes is the same on every instance.
 */
export function healthRouter(store: Store): Router {
  const router = express.Router();
  router.get('/healthz', async (_req, res) => {
    await ping(store.db);
    res.json({ status: 'ok' });
  });
  return router;
}

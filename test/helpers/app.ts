import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { createApp, type AppDeps } from '../../server/app.js';
import { expressServer } from '../../shared/express-server.js';
import type { Domain } from './domain.js';

/**
 * The /v1 app over a domain's store, clock, processor and services, silent, listening on a free
 * local port: for tests of the HTTP edge that need no server process. `deps` adds to or replaces
 * what the app is given (a rate limiter, the lean paths' switch).
 */
export async function listenOver(domain: Domain, rateLimit: number, deps: Partial<AppDeps> = {}): Promise<{ server: Server; url: string }> {
  const app = createApp({
    store: domain.store,
    clock: domain.clock,
    logger: pino({ level: 'silent' }),
    config: { rateLimit, rateWindowSeconds: 60, simulateLive: false },
    processor: domain.processor,
    services: domain.services,
    ...deps,
  });
  // Served as `pos server` serves it.
  const server = expressServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

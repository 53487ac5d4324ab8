import { createServer } from 'node:http';
import express from 'express';
import { expressServer } from '../shared/express-server.js';

/**
 * The baseline: the cheapest useful Express 5 app, a JSON hello-world, run alone in its own process.
 * Every pos scenario is reported as a ratio of its requests per second, which factors out the
 * machine. With `--served-as-pos` it is served as `pos server` serves its apps (shared/express-server.ts),
 * requests made with the app's prototypes: the same app without Express's per-request re-parenting.
 * Prints `{"url": …}` on stdout once listening.
 */
const app = express();
app.get('/', (_req, res) => {
  res.json({ hello: 'world' });
});
const server = process.argv.includes('--served-as-pos') ? expressServer(app) : createServer(app);
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('baseline server has no TCP address');
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${address.port}` })}\n`);
});
process.once('SIGTERM', () => server.close(() => process.exit(0)));

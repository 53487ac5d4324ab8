import express from 'express';

/**
 * The baseline: the cheapest useful Express 5 app, a JSON hello-world, run alone in its own process.
 * Every pos scenario is reported as a ratio of its requests per second, which factors out the
 * machine. Prints `{"url": …}` on stdout once listening.
 */
const app = express();
app.get('/', (_req, res) => {
  res.json({ hello: 'world' });
});
const server = app.listen(0, '127.0.0.1', () => {
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('baseline server has no TCP address');
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${address.port}` })}\n`);
});
process.once('SIGTERM', () => server.close(() => process.exit(0)));

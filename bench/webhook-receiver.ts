import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The merchant's receiver in the webhook scenarios, in its own process as a merchant's server would
 * be (sharing a sender's event loop would make it wait behind the work it is meant to measure).
 * `POST /hooks` reads the body and answers 200 at once, checking nothing: it is the same for every
 * sender, and its cost is not what is measured. Prints `{"url": …}` once listening.
 *
 * A sender drives one phase at a time over the control routes:
 *   POST /_phase?deliveries=N  forget the last phase and count distinct `webhook-id`s from now;
 *   GET  /_done                answered once N distinct ids have arrived in this phase;
 *   GET  /_bodies              the last phase's `{id, body}` in arrival order (first copy of each id),
 *                              so the bare sender posts exactly what pos posted.
 */
let expected = 0;
let bodies = new Map<string, string>();
let waiting: ServerResponse[] = [];

function settle(): void {
  if (bodies.size < expected || waiting.length === 0) return;
  for (const res of waiting) res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ deliveries: bodies.size }));
  waiting = [];
}

const server = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://receiver');
  if (req.method === 'POST' && url.pathname === '/hooks') {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      res.writeHead(200).end();
      const id = req.headers['webhook-id'];
      if (typeof id === 'string' && !bodies.has(id)) {
        bodies.set(id, Buffer.concat(chunks).toString('utf8'));
        settle();
      }
    });
    return;
  }
  req.resume();
  if (req.method === 'POST' && url.pathname === '/_phase') {
    expected = Number(url.searchParams.get('deliveries'));
    bodies = new Map();
    waiting = [];
    res.writeHead(204).end();
  } else if (req.method === 'GET' && url.pathname === '/_done') {
    waiting.push(res);
    settle();
  } else if (req.method === 'GET' && url.pathname === '/_bodies') {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify([...bodies].map(([id, body]) => ({ id, body }))));
  } else {
    res.writeHead(404).end();
  }
});

server.listen(0, '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })}\n`));

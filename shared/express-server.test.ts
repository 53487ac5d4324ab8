import { createServer, IncomingMessage, type Server, ServerResponse } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import express, { type Request, type Response } from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { expressServer } from './express-server.js';

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

async function listen(server: Server): Promise<string> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** An app that reports what its handler saw of the request and response objects. */
function probeApp() {
  const app = express();
  const seen: { requestProto: boolean; responseProto: boolean; incoming: boolean; outgoing: boolean }[] = [];
  app.post('/echo/:id', express.json(), (req: Request, res: Response) => {
    seen.push({
      requestProto: Object.getPrototypeOf(req) === app.request,
      responseProto: Object.getPrototypeOf(res) === app.response,
      incoming: req instanceof IncomingMessage,
      outgoing: res instanceof ServerResponse,
    });
    res.status(201).set('X-Seen', req.get('x-probe') ?? '').json({ id: req.params.id, body: req.body as unknown, ip: req.ip });
  });
  return { app, seen };
}

async function exchange(url: string): Promise<{ status: number; headers: [string, string][]; body: string }> {
  const res = await fetch(`${url}/echo/abc`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-probe': 'yes' }, body: JSON.stringify({ amount: 4750 }) });
  // Date differs between two answers; every other header is compared.
  const headers = [...res.headers].filter(([name]) => name !== 'date');
  return { status: res.status, headers, body: await res.text() };
}

describe('expressServer', () => {
  it("gives each request and response the app's prototypes before Express sees them, and answers as createServer(app) does", async () => {
    const ours = probeApp();
    const stock = probeApp();
    const fromOurs = await exchange(await listen(expressServer(ours.app)));
    const fromStock = await exchange(await listen(createServer(stock.app)));
    expect(fromOurs).toEqual(fromStock);
    expect(fromOurs.status).toBe(201);
    expect(JSON.parse(fromOurs.body)).toEqual({ id: 'abc', body: { amount: 4750 }, ip: '127.0.0.1' });
    expect(ours.seen).toEqual([{ requestProto: true, responseProto: true, incoming: true, outgoing: true }]);
  });

  it('makes objects whose prototype is already the one Express sets: its entry changes nothing', async () => {
    const app = express();
    let before: object | null = null;
    const server = expressServer(app);
    // The server's own request listener runs before Express's entry re-parents the objects.
    server.prependListener('request', (req: IncomingMessage) => {
      before = Object.getPrototypeOf(req) as object;
    });
    app.get('/', (_req, res) => void res.end('ok'));
    const url = await listen(server);
    expect(await (await fetch(url)).text()).toBe('ok');
    expect(before).toBe(app.request);
  });

  it('answers a malformed request with 400 and a client that leaves mid-body with nothing, and serves the next request', async () => {
    const { app, seen } = probeApp();
    const url = await listen(expressServer(app));
    const { port } = new URL(url);
    const raw = (bytes: string, end: boolean): Promise<string> =>
      new Promise((resolve) => {
        const socket = connect(Number(port), '127.0.0.1', () => (end ? socket.end(bytes) : socket.write(bytes, () => setTimeout(() => socket.destroy(), 50))));
        let answer = '';
        socket.setEncoding('utf8').on('data', (chunk: string) => (answer += chunk));
        socket.on('close', () => resolve(answer));
        socket.on('error', () => undefined);
      });
    expect(await raw('NOT HTTP AT ALL\r\n\r\n', true)).toMatch(/^HTTP\/1\.1 400 /);
    // Headers promise 100 bytes of body; 10 come before the client goes.
    expect(await raw('POST /echo/abc HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"amount":', false)).toBe('');
    expect(seen).toEqual([]);
    const next = await exchange(url);
    expect(next.status).toBe(201);
    expect(seen).toHaveLength(1);
  });
});

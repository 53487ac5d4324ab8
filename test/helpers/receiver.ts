import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { checkWebhook } from './contract.js';

export interface Received {
  id: string;
  type: string;
  body: string;
  headers: IncomingHttpHeaders;
  event: { id: string; type: string; created_at: string; request: { id: string | null; idempotency_key: string | null }; data: Record<string, unknown> };
  at: number;
  /** Answered with a 2xx. */
  accepted: boolean;
}

/** How the receiver answers a request: a status, or `hang` to accept and never answer. */
export type Answer = number | 'hang' | { status: number; headers?: Record<string, string> };

/**
 * A real webhook receiver on a port-0 `node:http` server. It records every request (verified or
 * not) and answers with what `answer` returns, 200 by default.
 */
export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  answer: (r: Received) => Answer;
  /** Event ids received with a valid signature and a 2xx answer, in arrival order. */
  acceptedIds(): string[];
  verify(secret: string, r: Received): unknown;
  close(): Promise<void>;
}

export async function startReceiver(port = 0): Promise<Receiver> {
  const hanging = new Set<ServerResponse>();
  const accepted: string[] = [];
  const receiver: Receiver = {
    url: '',
    port: 0,
    received: [],
    answer: () => 200,
    acceptedIds: () => [...accepted],
    verify: (secret, r) => new Webhook(secret).verify(r.body, r.headers as Record<string, string>),
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let event: Received['event'];
      try {
        event = JSON.parse(body) as Received['event'];
      } catch {
        res.writeHead(400).end();
        return;
      }
      // A signed delivery is one of the document's webhooks; a violation is recorded and fails the test (test/setup/contract.ts).
      if (req.headers['webhook-signature'] !== undefined) {
        try {
          checkWebhook(body);
        } catch {
          // Recorded by checkWebhook; the receiver still answers as asked.
        }
      }
      const r: Received = { id: String(req.headers['webhook-id']), type: event.type, body, headers: req.headers, event, at: Date.now(), accepted: false };
      receiver.received.push(r);
      const answer = receiver.answer(r);
      if (answer === 'hang') {
        hanging.add(res);
        return;
      }
      const { status, headers } = typeof answer === 'number' ? { status: answer, headers: {} } : answer;
      if (status >= 200 && status < 300) {
        r.accepted = true;
        accepted.push(r.id);
      }
      res.writeHead(status, headers).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', () => resolve()));
  receiver.port = (server.address() as AddressInfo).port;
  receiver.url = `http://127.0.0.1:${receiver.port}/hooks`;
  return receiver;
}

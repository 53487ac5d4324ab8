import { principalOf } from '../http/middleware.js';
import { route } from '../http/route-table.js';
import { RequestLogEntrySchema, RequestLogStreamQuerySchema } from '../../shared/contract/request-log.js';

/** A comment line this often keeps proxies and NAT tables from dropping an idle stream (as the event stream does). */
const HEARTBEAT_MS = 15_000;

/** The merchant's own requests as they finish: the secret key's alone, since it shows every key's traffic. */
export const requestLogRoutes = [
  route({
    operationId: 'streamRequestLog',
    method: 'get',
    path: '/v1/request-log/stream',
    scope: 'secret',
    summary: "Server-Sent Events: each /v1 request of the key's merchant and mode as it finishes (pos logs tail)",
    query: RequestLogStreamQuerySchema,
    responses: { 200: RequestLogEntrySchema },
    stream: 'RequestLogEntry',
    async handle({ requestLog, eventStreams }, { req, res }) {
      const principal = principalOf(req);
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive', 'x-accel-buffering': 'no' });
      if (req.method === 'HEAD') {
        res.end();
        return;
      }
      res.write(`event: ready\ndata: ${JSON.stringify({ mode: principal.mode })}\n\n`);
      let closed = false;
      const heartbeat = setInterval(() => res.write(': ping\n\n'), HEARTBEAT_MS);
      const stop = requestLog.subscribe(principal.merchantId, principal.mode, (entry) => {
        if (!closed) res.write(`id: ${entry.request_id}\nevent: request\ndata: ${JSON.stringify(entry)}\n\n`);
      });
      const close = () => {
        if (closed) return;
        closed = true;
        clearInterval(heartbeat);
        stop();
        forget();
        res.end();
      };
      // Closed with the event streams when the server shuts down.
      const forget = eventStreams.add(close);
      res.on('close', close);
    },
  }),
];

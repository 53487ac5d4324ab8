import { principalOf } from '../http/middleware.js';
import { openEventStream } from '../http/event-stream.js';
import { route } from '../http/route-table.js';
import { RequestLogEntrySchema, RequestLogStreamQuerySchema } from '../../shared/contract/request-log.js';

/**
 * The merchant's own requests as they finish: the secret key's alone, since it shows every key's
 * traffic, and ended the moment that key is revoked or expires, as the event stream is.
 */
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
    async handle({ requestLog, eventStreams, keyWatch }, { req, res }) {
      const principal = principalOf(req);
      const stream = openEventStream(req, res, { streams: eventStreams, keyWatch, principal });
      if (!stream) return;
      stream.onClose(requestLog.subscribe(principal.merchantId, principal.mode, (entry) => stream.send('request', entry, entry.request_id)));
    },
  }),
];

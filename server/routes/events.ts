import { principalOf, scopeOf } from '../http/middleware.js';
import { route } from '../http/route-table.js';
import { dataEnvelope } from '../../shared/contract/common.js';
import { EventDetailSchema, EventListQuerySchema, EventListSchema, EventSchema, EventStreamQuerySchema, ResendEventSchema } from '../../shared/contract/webhooks.js';
import { z } from '../../shared/contract/zod.js';
import { pageRequest } from '../pagination.js';
import { filterMatches } from '../webhooks/endpoints.js';
import type { KeyEnd } from '../accounts/key-watch.js';
import { missingEventPermission, shownTo, visibleEventTypes } from '../accounts/visibility.js';
import { missingScope, unauthenticated } from '../errors.js';

const IdParams = z.object({ id: z.string().openapi({ description: 'evt_ id' }) });

/** A comment line this often keeps proxies and NAT tables from dropping an idle stream. */
const HEARTBEAT_MS = 15_000;

/** What the stream says before it ends because its key stopped working: the 401 a new request with the key gets. */
const KEY_ENDED: Record<KeyEnd, string> = {
  revoked: 'The API key this stream was opened with was revoked',
  expired: 'The API key this stream was opened with expired (it was rolled and its grace period ended)',
};

// A restricted key sees only events about objects it may read (server/accounts/visibility.ts);
// fields of customers inside the events it does see are nulled by the answer layer. Asking for
// exactly a type it may not see is the 403 the object's own route would give.
export const eventRoutes = [
  route({
    operationId: 'listEvents',
    method: 'get',
    path: '/v1/events',
    scope: 'events:read',
    summary: 'List events, newest first, optionally of one type',
    query: EventListQuerySchema,
    responses: { 200: EventListSchema },
    async handle({ events }, { req, res, query }) {
      const principal = principalOf(req);
      const missing = query.type === undefined ? undefined : missingEventPermission(principal, query.type);
      if (missing) throw missingScope(missing);
      res.json(await events.list(scopeOf(req), pageRequest(query), query.type, visibleEventTypes(principal)));
    },
  }),
  route({
    operationId: 'streamEvents',
    method: 'get',
    path: '/v1/events/stream',
    scope: 'events:read',
    summary: 'Server-Sent Events: every new event of the key’s merchant and mode as it happens (pos listen)',
    query: EventStreamQuerySchema,
    responses: { 200: EventSchema },
    stream: 'Event',
    async handle({ events, eventStreams: streams, keyWatch }, { req, res, query }) {
      const scope = scopeOf(req);
      const types = query.types
        ?.split(',')
        .map((t) => t.trim())
        .filter(Boolean);
      const principal = principalOf(req);
      const visible = visibleEventTypes(principal);
      const lastId = req.get('last-event-id');
      const seq = (lastId ? await events.seqOf(scope, lastId) : undefined) ?? (await events.currentSeq(scope));

      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive', 'x-accel-buffering': 'no' });
      // A HEAD has no body to stream, and Node sends its head only with the body's first byte or its
      // end: without this, a HEAD would hold a stream open and its caller would never be answered.
      if (req.method === 'HEAD') {
        res.end();
        return;
      }
      res.write(`event: ready\ndata: ${JSON.stringify({ mode: scope.mode })}\n\n`);

      let closed = false;
      let stop = (): void => {};
      let release = (): void => {};
      const heartbeat = setInterval(() => res.write(': ping\n\n'), HEARTBEAT_MS);
      const close = () => {
        if (closed) return;
        closed = true;
        clearInterval(heartbeat);
        stop();
        release();
        forget();
        res.end();
      };
      const forget = streams.add(close);
      res.on('close', close);
      // Ends the stream as soon as its key stops working, on whichever instance revoked or rolled it;
      // the client is told why, as a new request with the key would be (401).
      release = keyWatch.hold(principal, (why) => {
        if (closed) return;
        res.write(`event: error\ndata: ${JSON.stringify(unauthenticated(KEY_ENDED[why]).toBody())}\n\n`);
        close();
      });
      // Woken by each commit that writes an event of this merchant and mode; a failed read ends the
      // stream, and the client resumes with Last-Event-ID.
      stop = events.follow(
        scope,
        seq,
        (batch) => {
          if (closed) return;
          for (const event of batch) {
            if (types && !filterMatches(types, event.type)) continue;
            res.write(`id: ${event.id}\nevent: ${event.type}\ndata: ${JSON.stringify(shownTo(principal, event))}\n\n`);
          }
        },
        close,
        visible,
      );
    },
  }),
  route({
    operationId: 'retrieveEvent',
    method: 'get',
    path: '/v1/events/{id}',
    scope: 'events:read',
    summary: 'Retrieve an event with its webhook deliveries and attempts',
    params: IdParams,
    responses: { 200: dataEnvelope(EventDetailSchema) },
    async handle({ events }, { req, res, params }) {
      res.json({ data: await events.get(scopeOf(req), params.id, visibleEventTypes(principalOf(req))) });
    },
  }),
  route({
    operationId: 'resendEvent',
    method: 'post',
    path: '/v1/events/{id}/resend',
    scope: 'webhooks:write',
    summary: 'Send the event again to one endpoint (one attempt, now)',
    params: IdParams,
    body: ResendEventSchema,
    responses: { 202: dataEnvelope(EventDetailSchema) },
    conflicts: ['endpoint_disabled', 'event_mode_unknown'],
    async handle({ events }, { req, res, params, body }) {
      res.status(202).json({ data: await events.resend(scopeOf(req), params.id, body.endpoint_id) });
    },
  }),
];

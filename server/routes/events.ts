import { principalOf, scopeOf } from '../http/middleware.js';
import { route } from '../http/route-table.js';
import { dataEnvelope } from '../../shared/contract/common.js';
import { EventDetailSchema, EventListQuerySchema, EventListSchema, EventSchema, EventStreamQuerySchema, ResendEventSchema } from '../../shared/contract/webhooks.js';
import { z } from '../../shared/contract/zod.js';
import { pageRequest } from '../pagination.js';
import { filterMatches } from '../webhooks/endpoints.js';
import { missingEventPermission, shownTo, visibleEventTypes } from '../accounts/visibility.js';
import { missingScope } from '../errors.js';
import { openEventStream } from '../http/event-stream.js';

const IdParams = z.object({ id: z.string().openapi({ description: 'evt_ id' }) });

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

      const stream = openEventStream(req, res, { streams, keyWatch, principal });
      if (!stream) return;
      // Woken by each commit that writes an event of this merchant and mode; a failed read ends the
      // stream, and the client resumes with Last-Event-ID.
      const stop = events.follow(
        scope,
        seq,
        (batch) => {
          for (const event of batch) {
            if (types && !filterMatches(types, event.type)) continue;
            stream.send(event.type, shownTo(principal, event), event.id);
          }
        },
        () => stream.close(),
        visible,
      );
      stream.onClose(stop);
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

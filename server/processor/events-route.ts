import express, { Router } from 'express';
import type Stripe from 'stripe';
import type { Logger } from 'pino';
import type { Clock } from '../../shared/time.js';
import type { Mode } from '../db/schema.js';
import type { Store } from '../db/store.js';
import type { ProcessorGateway } from './gateway.js';

/** A consumer of processor events. Handlers must be safe to run twice for the same event. */
export type ProcessorEventHandler = (event: Stripe.Event, mode: Mode) => Promise<void>;

/**
 * Processor events are small (one object each); 1 MB is Stripe's own cap on a webhook payload.
 */
const EVENT_BODY_LIMIT = '1mb';

function objectId(event: Stripe.Event): string | null {
  const object = event.data.object as { id?: unknown };
  return typeof object.id === 'string' ? object.id : null;
}

/**
 * `POST /processor/webhooks`: signed events from the processor. The signature is checked on the
 * raw bytes before anything is parsed or stored; an event is acknowledged (2xx) only once every
 * handler has applied it, so a failure makes the processor deliver it again.
 */
export function processorEventsRouter(deps: { gateway: ProcessorGateway; store: Store; clock: Clock; logger: Logger; handlers: readonly ProcessorEventHandler[] }): Router {
  const router = Router();
  router.post('/', express.raw({ type: () => true, limit: EVENT_BODY_LIMIT }), async (req, res) => {
    const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const event = deps.gateway.verifyEvent(body, req.get('stripe-signature'));
    const mode: Mode = event.livemode ? 'live' : 'test';
    const seen = await deps.store.db.selectFrom('processor_events').select('id').where('id', '=', event.id).executeTakeFirst();
    if (seen) {
      res.json({ received: true, duplicate: true });
      return;
    }
    for (const handler of deps.handlers) await handler(event, mode);
    await deps.store.db
      .insertInto('processor_events')
      .values({ id: event.id, mode, type: event.type, object_id: objectId(event), received_at: deps.clock.now() })
      .onConflict((oc) => oc.column('id').doNothing())
      .execute();
    deps.logger.debug({ event_id: event.id, type: event.type, mode }, 'processor event applied');
    res.json({ received: true });
  });
  return router;
}

import express, { Router } from 'express';
import type { Logger } from 'pino';
import type { Mode } from '../db/schema.js';
import { inRequestContext } from '../operations/observe.js';
import { EventNotYetApplicable } from './errors.js';
import type { ProcessorEventLog } from './event-log.js';
import type { EventsPort } from './port.js';
import type { ProcessorEvent } from './snapshots.js';

/** A consumer of processor events. Handlers must be safe to run twice for the same event. */
export type ProcessorEventHandler = (event: ProcessorEvent, mode: Mode) => Promise<void>;

/** What the refusal asks of the processor; Stripe keeps its own schedule, the simulator takes it as 1 s. */
const RETRY_AFTER_SECONDS = 1;

/**
 * Processor events are small (one object each); 1 MB is Stripe's own cap on a webhook payload.
 */
const EVENT_BODY_LIMIT = '1mb';

/**
 * `POST /processor/webhooks`: signed events from the processor. The signature is checked on the
 * raw bytes before anything is parsed or stored; an event is acknowledged (2xx) only once every
 * handler has applied it, so a failure makes the processor deliver it again.
 */
export function processorEventsRouter(deps: { processor: EventsPort; log: ProcessorEventLog; logger: Logger; handlers: readonly ProcessorEventHandler[] }): Router {
  const router = Router();
  router.post('/', inRequestContext(express.raw({ type: () => true, limit: EVENT_BODY_LIMIT })), async (req, res) => {
    const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const event = deps.processor.verifyEvent(body, req.get('stripe-signature'));
    const mode: Mode = event.mode;
    if (await deps.log.seen(event.id)) {
      res.json({ received: true, duplicate: true });
      return;
    }
    try {
      for (const handler of deps.handlers) await handler(event, mode);
    } catch (err) {
      if (!(err instanceof EventNotYetApplicable)) throw err;
      deps.logger.info({ event_id: event.id, type: event.type, mode, reason: err.message }, 'processor event deferred: asked to be sent again');
      res.status(503).set('Retry-After', String(RETRY_AFTER_SECONDS)).json({ received: false, retry: true });
      return;
    }
    await deps.log.record(event, mode);
    deps.logger.debug({ event_id: event.id, type: event.type, mode }, 'processor event applied');
    res.json({ received: true });
  });
  return router;
}

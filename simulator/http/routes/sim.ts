import { Router, type Request, type Response } from 'express';
import { z } from 'zod';
import type { SimulatorControl } from '../../control.js';
import type { Services } from '../services.js';
import { bool, int, parse, stringList } from '../params.js';
import { formatAmount } from '../../../shared/money.js';
import type { ScriptedOutcome } from '../../engine/terminal/types.js';
import type { CapabilityStatus } from '../../engine/connect/accountTypes.js';

/**
 * `/_sim`: the control API over HTTP (JSON or form bodies, answers in JSON) and the two pages a
 * browser sees — the 3DS challenge and the charge receipt. No API key: the simulator listens on
 * loopback and these routes play the cardholder, the issuer and the network, not a merchant.
 */

const msSchema = z.object({ ms: int }).strict();
const threeDsSchema = z.object({ result: z.enum(['complete', 'fail']) }).strict();
const capabilitySchema = z.object({ status: z.enum(['active', 'inactive', 'pending', 'disabled', 'unrequested']) }).strict();
const onlineSchema = z.object({ online: bool }).strict();
const scriptSchema = z.object({ outcomes: stringList }).strict();
const tipSchema = z.object({ option: int.optional(), amount: int.optional(), none: bool.optional() }).strict();
const rateLimitsSchema = z.object({ enabled: bool }).strict();
/** `*` or a method and a `/v1` path template, as the rate-limit report names endpoints. */
const throttleSchema = z.object({ endpoints: z.array(z.string().regex(/^(\*|(GET|POST|DELETE) \/v1\/[A-Za-z0-9_/:]*)$/)).max(100) }).strict();
const faultsSchema = z
  .object({ delay_ms: int.optional(), duplicate: bool.optional(), drop: bool.optional(), drop_next: int.optional(), hold: bool.optional(), hold_batch: int.optional() })
  .strict();

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);
}

function page(title: string, body: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head><body><h1>${escapeHtml(title)}</h1>${body}</body></html>`;
}

type AsyncRoute = (req: Request, res: Response) => Promise<void>;

/** Express 5 forwards rejected promises to the error handler. */
function json(run: (req: Request) => Promise<unknown>): AsyncRoute {
  return async (req, res) => {
    res.json(await run(req));
  };
}

function body(req: Request): Record<string, unknown> {
  return (req.body as Record<string, unknown> | undefined) ?? {};
}

export function simRouter(s: Services, control: SimulatorControl): Router {
  const r = Router();
  r.get('/health', (_req, res) => {
    res.json({ ok: true });
  });
  r.post('/authorization_delay', json(async (req) => {
    await control.setAuthorizationDelay(parse(msSchema, body(req)).ms);
    return { authorization_delay_ms: s.kernel.config.authorizationDelayMs };
  }));
  r.post('/ach_settlement_delay', json(async (req) => {
    await control.setAchSettlementDelay(parse(msSchema, body(req)).ms);
    return { ach_settlement_delay_ms: s.kernel.config.achSettlementDelayMs };
  }));
  r.post('/dispute_delay', json(async (req) => {
    await control.setDisputeDelay(parse(msSchema, body(req)).ms);
    return { dispute_delay_ms: s.kernel.config.disputeDelayMs };
  }));
  r.post('/verification_delay', json(async (req) => {
    await control.setVerificationDelay(parse(msSchema, body(req)).ms);
    return { verification_delay_ms: s.kernel.config.verificationDelayMs };
  }));
  r.post('/account_link_ttl', json(async (req) => {
    await control.setAccountLinkTtl(parse(msSchema, body(req)).ms);
    return { account_link_ttl_ms: s.kernel.config.accountLinkTtlMs };
  }));
  r.post('/payment_intents/:id/3ds', json(async (req) => {
    const { result } = parse(threeDsSchema, body(req));
    const id = String(req.params.id);
    return result === 'complete' ? control.completeThreeDSecure(id) : control.failThreeDSecure(id);
  }));
  r.post('/accounts/:id/capabilities/:capability', json(async (req) => {
    const { status } = parse(capabilitySchema, body(req));
    return control.setCapability(String(req.params.id), String(req.params.capability), status as CapabilityStatus);
  }));
  r.post('/readers/:id/customer_cancel', json(async (req) => control.customerCancel(String(req.params.id))));
  r.get('/readers/:id/display', json(async (req) => control.readerDisplay(String(req.params.id))));
  r.post('/readers/:id/tip', json(async (req) => {
    const choice = parse(tipSchema, body(req));
    return control.chooseTip(String(req.params.id), {
      ...(choice.option !== undefined ? { option: choice.option } : {}),
      ...(choice.amount !== undefined ? { amount: choice.amount } : {}),
      ...(choice.none !== undefined ? { none: choice.none } : {}),
    });
  }));
  r.post('/readers/:id/online', json(async (req) => control.setReaderOnline(String(req.params.id), parse(onlineSchema, body(req)).online)));
  r.post('/readers/:id/script', json(async (req) => control.scriptReader(String(req.params.id), parse(scriptSchema, body(req)).outcomes as ScriptedOutcome[])));
  r.get('/webhooks/faults', json(async () => control.getWebhookFaults()));
  r.post('/webhooks/faults', json(async (req) => {
    const p = parse(faultsSchema, body(req));
    return control.setWebhookFaults({
      ...(p.delay_ms !== undefined ? { delayMs: p.delay_ms } : {}),
      ...(p.duplicate !== undefined ? { duplicate: p.duplicate } : {}),
      ...(p.drop !== undefined ? { drop: p.drop } : {}),
      ...(p.drop_next !== undefined ? { dropNext: p.drop_next } : {}),
      ...(p.hold !== undefined ? { hold: p.hold } : {}),
      ...(p.hold_batch !== undefined ? { holdBatch: p.hold_batch } : {}),
    });
  }));
  r.post('/webhooks/release', json(async () => ({ released: await control.releaseHeldWebhooks() })));
  r.get('/webhooks/deliveries', json(async () => ({ data: await control.webhookDeliveries() })));
  r.post('/timers/advance', json(async () => control.advanceTimers()));
  r.get('/rate_limits', json(async () => control.rateLimits()));
  r.post('/rate_limits', json(async (req) => control.setRateLimits(parse(rateLimitsSchema, body(req)).enabled)));
  r.post('/rate_limits/reset', json(async () => control.resetRateLimits()));
  r.post('/rate_limits/throttle', json(async (req) => control.throttle(parse(throttleSchema, body(req)).endpoints)));

  r.get('/3ds/:id', (req, res) => {
    const id = String(req.params.id);
    const pi = s.payments.challenge(id);
    if (!pi) {
      res.status(404).type('html').send(page('Unknown payment', `<p>No payment ${escapeHtml(id)}.</p>`));
      return;
    }
    const amount = formatAmount(pi.amount, pi.currency);
    const form = (result: string, label: string): string =>
      `<form method="post" action="/_sim/3ds/${escapeHtml(id)}"><input type="hidden" name="result" value="${result}"><button type="submit">${label}</button></form>`;
    res
      .type('html')
      .send(
        page(
          '3D Secure authentication (simulator)',
          `<p>Payment ${escapeHtml(id)} of ${escapeHtml(amount)} asks the cardholder to authenticate.</p>${form('complete', 'Complete authentication')}${form('fail', 'Fail authentication')}`,
        ),
      );
  });
  r.post('/3ds/:id', async (req, res) => {
    const id = String(req.params.id);
    const { result } = parse(threeDsSchema, body(req));
    // The challenge clears next_action, so the return URL is read before answering it.
    const returnUrl = s.payments.challenge(id)?.returnUrl ?? null;
    const pi = result === 'complete' ? await control.completeThreeDSecure(id) : await control.failThreeDSecure(id);
    if (returnUrl) {
      const target = new URL(returnUrl);
      target.searchParams.set('payment_intent', pi.id);
      if (pi.client_secret) target.searchParams.set('payment_intent_client_secret', pi.client_secret);
      res.redirect(303, target.toString());
      return;
    }
    res.type('html').send(page('Authentication finished', `<p>Payment ${escapeHtml(pi.id)} is now <strong>${escapeHtml(pi.status)}</strong>.</p>`));
  });
  r.get('/receipts/:id', (req, res) => {
    const charge = s.charges.receipt(String(req.params.id));
    if (!charge) {
      res.status(404).type('html').send(page('Unknown receipt', '<p>No such charge.</p>'));
      return;
    }
    const money = (amount: number): string => escapeHtml(formatAmount(amount, charge.currency));
    res.type('html').send(
      page(
        'Receipt (simulator)',
        `<p>Charge ${escapeHtml(charge.id)}: ${money(charge.amount)}, ${escapeHtml(charge.status)}; refunded ${money(charge.amountRefunded)}.</p>`,
      ),
    );
  });
  return r;
}


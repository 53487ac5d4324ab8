import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import express, { type Request, type Response, Router } from 'express';
import { missing, unavailable, unsupportedMediaType } from '../errors.js';
import { inputProblem } from '../http/input.js';
import { type LiveMoney, liveModeUnavailable } from '../http/live-money.js';
import { parseInput } from '../http/validate.js';
import type { Scope } from '../accounts/scope.js';
import { type Assets, type Processor, renderClosedPage, renderNotFoundPage, renderOnboardingPage, renderPaymentPage, renderUnavailablePage } from '../pages/render.js';
import { PageDetailsSchema } from '../../shared/contract/checkout.js';
import type { CheckoutPages, PageKind } from '../checkout/pages.js';
import { inRequestContext } from '../operations/observe.js';

/** What the pages need of the processor adapter: which processor, its publishable key, where browsers reach it. */
export interface PageProcessor {
  readonly kind: 'simulator' | 'stripe';
  publishableKey(mode: Scope['mode']): string | null;
  browserUrl(): string | null;
}

/**
 * Which card form the pages show. A processor reached at a base URL of its own is a standalone
 * `pos simulator` (STRIPE_API_BASE): Stripe.js would send its cards to Stripe, which knows none of
 * its keys, so the page takes the card itself and confirms at the simulator, as on the embedded one.
 */
export function pageKindOf(processor: PageProcessor): 'simulator' | 'stripe' {
  return processor.kind === 'simulator' || processor.browserUrl() !== null ? 'simulator' : 'stripe';
}

/** The page's own submit body is a few short fields; 16 KB is generous and keeps abuse cheap. */
const START_BODY_LIMIT = '16kb';

/** Assets are addressed by content hash, so browsers may keep them for a year (the usual immutable maximum). */
const ASSET_MAX_AGE_S = 365 * 24 * 60 * 60;

/** Not content-addressed (its name is fixed), so a day: a new icon shows within one. */
const FAVICON_MAX_AGE_S = 24 * 60 * 60;

/** Stripe's documented CSP origins for Stripe.js and the Payment Element. */
const STRIPE_JS = 'https://js.stripe.com';
const STRIPE_ORIGINS = { connect: 'https://api.stripe.com', frame: `${STRIPE_JS} https://hooks.stripe.com`, img: 'https://*.stripe.com' };

interface Asset {
  body: Buffer;
  type: string;
  hash: string;
}

function loadAsset(name: string, type: string): Asset {
  const body = readFileSync(new URL(`../pages/assets/${name}`, import.meta.url));
  return { body, type, hash: createHash('sha256').update(body).digest('hex').slice(0, 12) };
}

/**
 * The strictest policy the page works under: scripts and styles only from our origin (plus
 * Stripe.js in stripe mode), requests only to us and the processor, never framed.
 */
export function contentSecurityPolicy(processor: PageProcessor): string {
  const stripe = pageKindOf(processor) === 'stripe';
  const processorOrigin = stripe ? STRIPE_ORIGINS.connect : new URL(processor.browserUrl() ?? 'http://invalid').origin;
  return [
    "default-src 'none'",
    `script-src 'self'${stripe ? ` ${STRIPE_JS}` : ''}`,
    "style-src 'self'",
    `img-src 'self' data:${stripe ? ` ${STRIPE_ORIGINS.img}` : ''}`,
    `connect-src 'self' ${processorOrigin}`,
    ...(stripe ? [`frame-src ${STRIPE_ORIGINS.frame}`] : []),
    "form-action 'self'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

function pageHeaders(res: Response, csp: string): void {
  res.set({
    'Content-Security-Policy': csp,
    // The page URL is the only key to the page, and a 3-D Secure return carries the client_secret
    // in its query: neither may leak to another site or sit in a shared cache.
    'Referrer-Policy': 'no-referrer',
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
    'X-Frame-Options': 'DENY',
  });
}

/**
 * Hosted checkout (`/checkout/cs_…`) and payment-link (`/pay/pl_…`) pages. Public: the
 * unguessable reference in the URL is the only credential, as on Stripe's hosted pages.
 * `POST …/start` (same-origin JSON) checks the page can still be paid, keeps what the customer
 * typed and hands the script the client_secret to confirm with, in the browser, at the processor.
 */
export function pagesRouter(pages: CheckoutPages, processor: PageProcessor, liveMoney: LiveMoney): Router {
  const script = loadAsset('checkout.js', 'text/javascript; charset=utf-8');
  const style = loadAsset('checkout.css', 'text/css; charset=utf-8');
  const favicon = loadAsset('favicon.ico', 'image/x-icon');
  const assets: Assets = { script: `/checkout-assets/checkout.js?v=${script.hash}`, style: `/checkout-assets/checkout.css?v=${style.hash}` };
  const csp = contentSecurityPolicy(processor);
  const router = Router();

  for (const [name, asset] of [
    ['checkout.js', script],
    ['checkout.css', style],
  ] as const) {
    router.get(`/checkout-assets/${name}`, (_req, res) => {
      res.set({ 'Content-Type': asset.type, 'Cache-Control': `public, max-age=${ASSET_MAX_AGE_S}, immutable`, 'X-Content-Type-Options': 'nosniff' }).send(asset.body);
    });
  }

  // Browsers ask every origin for /favicon.ico; the pages also name it with <link rel="icon">.
  router.get('/favicon.ico', (_req, res) => {
    res.set({ 'Content-Type': favicon.type, 'Cache-Control': `public, max-age=${FAVICON_MAX_AGE_S}`, 'X-Content-Type-Options': 'nosniff' }).send(favicon.body);
  });

  const show = (kind: PageKind) => async (req: Request, res: Response) => {
    pageHeaders(res, csp);
    const view = await pages.view(kind, String(req.params.reference));
    if (!view) {
      res.status(404).type('html').send(renderNotFoundPage(assets));
      return;
    }
    // Back from the bank's 3-D Secure challenge after the processor's event already completed the
    // session: on to success_url, as the page's script would have gone had it got there first.
    if (view.state === 'complete' && view.successUrl && typeof req.query.payment_intent === 'string') {
      res.redirect(303, view.successUrl);
      return;
    }
    if (view.state !== 'payable') {
      res.status(view.state === 'complete' ? 200 : 410).type('html').send(renderClosedPage(view, assets, pageKindOf(processor) === 'simulator'));
      return;
    }
    if (view.mode === 'live' && liveMoney === 'unavailable') {
      // A live page made under --simulate-live, shown by a server without it: no form that cannot pay.
      res.status(503).type('html').send(renderUnavailablePage(view, assets));
      return;
    }
    const publishableKey = processor.publishableKey(view.mode);
    if (!publishableKey) throw unavailable(`The platform has no ${view.mode}-mode publishable key configured`, 'processor_not_configured');
    const page: Processor = { kind: pageKindOf(processor), publishableKey, apiUrl: processor.browserUrl() };
    res.type('html').send(renderPaymentPage(view, page, assets, `${req.baseUrl}${req.path.replace(/\/+$/, '')}/start`));
  };

  const start = (kind: PageKind) => async (req: Request, res: Response) => {
    res.set({ 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer' });
    // JSON only: a cross-site form cannot send it, and a cross-site fetch of it needs a CORS
    // preflight this server never grants.
    if (!req.is('application/json')) throw unsupportedMediaType('Request bodies must be JSON');
    const problem = inputProblem(req.body, 'body');
    if (problem) throw problem;
    const details = parseInput(PageDetailsSchema, req.body ?? {});
    if (liveMoney === 'unavailable' && (await pages.view(kind, String(req.params.reference)))?.mode === 'live') throw liveModeUnavailable();
    res.json({ data: await pages.startPayment(kind, String(req.params.reference), details) });
  };

  /**
   * The thank-you step reads the payment the page made: its reference, status and receipt link
   * (set once the processor reports the payment, so the script asks again until it is there).
   */
  const result = (kind: PageKind) => async (req: Request, res: Response) => {
    res.set({ 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer' });
    const transaction = String(req.params.transaction);
    const found = /^[A-Za-z0-9_-]{1,64}$/.test(transaction) ? await pages.paymentResult(kind, String(req.params.reference), transaction) : undefined;
    if (!found) throw missing('No such payment on this page', 'transaction');
    res.json({ data: { reference: found.reference, status: found.status, receipt_url: found.receiptUrl } });
  };

  const json = inRequestContext(express.json({ limit: START_BODY_LIMIT }));
  router.get('/checkout/:reference/payments/:transaction', result('session'));
  router.get('/pay/:reference/payments/:transaction', result('link'));
  router.get('/checkout/:reference', show('session'));
  router.post('/checkout/:reference/start', json, start('session'));
  router.get('/pay/:reference', show('link'));
  router.post('/pay/:reference/start', json, start('link'));
  // The default return and refresh URLs of onboarding links (server/accounts/onboarding.ts).
  for (const kind of ['return', 'refresh'] as const) {
    router.get(`/onboarding/${kind}`, (_req, res) => {
      pageHeaders(res, csp);
      res.type('html').send(renderOnboardingPage(kind, assets));
    });
  }
  return router;
}

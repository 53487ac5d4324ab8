import { formatAmount } from '../../shared/money.js';
import type { PageView, PaymentResult } from '../checkout/pages.js';

/**
 * HTML of the hosted pages. Everything dynamic goes through `escape`; there is no inline script
 * or style (the Content-Security-Policy forbids both), and no secret: the page's script asks for
 * the client_secret only when the customer submits.
 */

export function escape(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);
}

export interface Processor {
  kind: 'simulator' | 'stripe';
  publishableKey: string;
  /** The simulator's base URL; null for Stripe (Stripe.js knows its own). */
  apiUrl: string | null;
}

export interface Assets {
  script: string;
  style: string;
}

function layout(title: string, assets: Assets, body: string, extraHead = ''): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escape(title)}</title>
<link rel="icon" href="/favicon.ico">
<link rel="stylesheet" href="${escape(assets.style)}">
${extraHead}</head>
<body>
${body}
</body>
</html>
`;
}

/** The summary; the amount is the page's heading unless the page has a heading of its own. */
function header(view: PageView, amountTag: 'h1' | 'p'): string {
  return `<header class="summary">
  <p class="merchant">${escape(view.merchantName)}${view.mode === 'test' ? ' <span class="badge">Test mode</span>' : ''}</p>
  <${amountTag} class="amount" id="amount">${escape(formatAmount(view.amount, view.currency))}</${amountTag}>
  ${view.description ? `<p class="description">${escape(view.description)}</p>` : ''}
</header>`;
}

function field(id: string, label: string, attrs: string, value: string | null = null, hint = ''): string {
  return `<div class="field">
    <label for="${id}">${escape(label)}</label>
    ${hint ? `<p class="hint" id="${id}-hint">${escape(hint)}</p>` : ''}
    <input id="${id}" name="${id}" ${attrs}${value ? ` value="${escape(value)}"` : ''} aria-describedby="${hint ? `${id}-hint ` : ''}${id}-error">
    <p class="field-error" id="${id}-error" hidden></p>
  </div>`;
}

function contactFields(view: PageView): string {
  const { collect, prefill } = view;
  const fields: string[] = [];
  if (collect.email) fields.push(field('email', 'Email', 'type="email" autocomplete="email" required', prefill.email));
  if (collect.name) fields.push(field('name', 'Full name', 'type="text" autocomplete="name" required maxlength="200"', prefill.name));
  if (collect.phone) fields.push(field('phone', 'Phone', 'type="tel" autocomplete="tel" required maxlength="20"'));
  if (fields.length === 0) return '';
  return `<fieldset><legend>Contact</legend>${fields.join('\n')}</fieldset>`;
}

function addressFields(view: PageView): string {
  if (!view.collect.address) return '';
  return `<fieldset><legend>Billing address</legend>
  ${field('address-line1', 'Address', 'type="text" autocomplete="address-line1" required maxlength="200"')}
  ${field('address-line2', 'Apartment, suite (optional)', 'type="text" autocomplete="address-line2" maxlength="200"')}
  ${field('address-city', 'City', 'type="text" autocomplete="address-level2" required maxlength="100"')}
  ${field('address-postal-code', 'Postal code', 'type="text" autocomplete="postal-code" required maxlength="20"')}
  ${field('address-country', 'Country code', 'type="text" autocomplete="country" required maxlength="2"', null, 'Two letters, for example US')}
</fieldset>`;
}

function cardFields(processor: Processor): string {
  if (processor.kind === 'stripe') {
    return `<fieldset><legend>Payment</legend><div id="payment-element"></div></fieldset>`;
  }
  return `<fieldset><legend>Card</legend>
  <div class="card-number">
  ${field('card-number', 'Card number', 'type="text" inputmode="numeric" autocomplete="cc-number" required maxlength="23" placeholder="1234 1234 1234 1234"')}
  <span id="card-brand" class="brand" data-brand="unknown" aria-live="polite"></span>
  </div>
  <div class="row">
  ${field('card-expiry', 'Expiry (MM/YY)', 'type="text" inputmode="numeric" autocomplete="cc-exp" required maxlength="7" placeholder="MM/YY"')}
  ${field('card-cvc', 'Security code', 'type="text" inputmode="numeric" autocomplete="cc-csc" required maxlength="4"')}
  </div>
</fieldset>`;
}

/**
 * On the simulator nothing is charged, whatever the mode: the page says so first, with the card
 * to use, and never claims the card goes to a processor.
 */
function simulatorNotice(view: PageView): string {
  const what = view.mode === 'live' ? 'Simulated payment' : 'Test page';
  return `<p class="notice" id="simulator-notice" role="note"><strong>${what}:</strong> no real payment is made and no card is charged. Use the test card 4242 4242 4242 4242 with any future expiry date and any security code.</p>`;
}

/** The payable page: summary, the fields the session collects, the card form, pay and cancel. */
export function renderPaymentPage(view: PageView, processor: Processor, assets: Assets, startUrl: string): string {
  const pay = `Pay ${formatAmount(view.amount, view.currency)}`;
  const data = {
    'data-kind': view.kind,
    'data-reference': view.reference,
    'data-start-url': startUrl,
    'data-processor': processor.kind,
    'data-processor-url': processor.apiUrl ?? '',
    'data-publishable-key': processor.publishableKey,
    'data-amount': String(view.amount),
    'data-currency': view.currency,
    'data-success-url': view.successUrl ?? '',
    'data-apple-pay': String(view.wallets.applePay),
    'data-google-pay': String(view.wallets.googlePay),
  };
  const attrs = Object.entries(data)
    .map(([k, v]) => `${k}="${escape(v)}"`)
    .join(' ');
  const stripeJs = processor.kind === 'stripe' ? '<script src="https://js.stripe.com/v3/"></script>\n' : '';
  return layout(
    `Pay ${view.merchantName}`,
    assets,
    `<main id="checkout" class="card" ${attrs}>
${processor.kind === 'simulator' ? simulatorNotice(view) : ''}
${header(view, 'h1')}
<form id="pay-form" novalidate>
${contactFields(view)}
${addressFields(view)}
${cardFields(processor)}
<div id="form-error" class="alert" role="alert" tabindex="-1" hidden></div>
<button type="submit" id="pay-button" class="pay">${escape(pay)}</button>
</form>
<div id="done" class="done" role="status" tabindex="-1" hidden>
<p id="done-message"></p>
<dl id="done-details" class="done-details" hidden>
<dt>Reference</dt><dd id="done-reference"></dd>
</dl>
<p id="done-receipt" hidden><a id="receipt-link" href="#" target="_blank" rel="noopener">View your receipt</a></p>
</div>
${view.cancelUrl ? `<p class="cancel"><a id="cancel-link" href="${escape(view.cancelUrl)}">Cancel and return to ${escape(view.merchantName)}</a></p>` : ''}
${
  processor.kind === 'simulator'
    ? '<p class="secure">This page runs on a payment simulator: card details stay on this test system and nothing is charged.</p>'
    : `<p class="secure">Card details go straight to our payment processor; ${escape(view.merchantName)} never sees them.</p>`
}
</main>`,
    `${stripeJs}<script type="module" src="${escape(assets.script)}"></script>\n`,
  );
}

/** The reference and receipt link of a paid page: what the customer keeps. */
function paidDetails(paid: PaymentResult): string {
  return `<dl class="done-details"><dt>Reference</dt><dd id="paid-reference">${escape(paid.reference)}</dd></dl>
${paid.receiptUrl ? `<p><a id="receipt-link" href="${escape(paid.receiptUrl)}" target="_blank" rel="noopener">View your receipt</a></p>` : ''}`;
}

/** Expired, deactivated or already paid: no form, only what happened and the way back. */
export function renderClosedPage(view: PageView, assets: Assets, simulated = false): string {
  const messages: Record<Exclude<PageView['state'], 'payable'>, [string, string]> = {
    expired: [
      view.kind === 'session' ? 'This checkout session has expired' : 'This payment link has expired',
      'No payment can be made here any more. Ask the merchant for a new link.',
    ],
    deactivated: ['This payment link is no longer active', 'The merchant has deactivated this link, so it cannot take payments.'],
    complete: ['This payment is complete', simulated ? 'Thank you: the simulated payment was received. No money moved.' : 'Thank you: the payment was received.'],
  };
  const [title, text] = messages[view.state === 'payable' ? 'complete' : view.state];
  const back = view.state === 'complete' ? view.successUrl : view.cancelUrl;
  return layout(
    title,
    assets,
    `<main class="card closed">
${header(view, 'p')}
<h1>${escape(title)}</h1>
<p>${escape(text)}</p>
${view.state === 'complete' && view.paid ? paidDetails(view.paid) : ''}
${back ? `<p><a href="${escape(back)}">Return to ${escape(view.merchantName)}</a></p>` : ''}
</main>`,
  );
}

/** A live page on a server whose live mode takes no payments (the simulator without --simulate-live). */
export function renderUnavailablePage(view: PageView, assets: Assets): string {
  return layout(
    'Payments unavailable',
    assets,
    `<main class="card closed">
${header(view, 'p')}
<h1>This page cannot take payments right now</h1>
<p>${escape(view.merchantName)} is not connected to a payment processor for live payments. Nothing was charged. Please contact ${escape(view.merchantName)}.</p>
</main>`,
  );
}

export function renderNotFoundPage(assets: Assets): string {
  return layout('Page not found', assets, `<main class="card closed"><h1>Page not found</h1><p>There is no checkout page at this address. Check the link you were given.</p></main>`);
}

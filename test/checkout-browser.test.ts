import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedMerchant } from '../server/accounts/merchants.js';
import { client, type Json } from './helpers/api.js';
import { eventsOf } from './helpers/payments.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { eventually } from './helpers/tmp.js';
import { CHROMIUM_PATH, haveChromium } from './helpers/tools.js';

// @backend-once what a browser shows and sends; the pages' storage is checkout-api's, on both backends.

/**
 * The hosted pages in a real browser: Debian's Chromium driven by playwright-core (.ci/run
 * installs it). Every test runs on a phone-sized screen; screenshots land in test/artifacts/.
 */

const ARTIFACTS = fileURLToPath(new URL('./artifacts/', import.meta.url));
/**
 * The screenshots the docs show (committed): the card form while typing, the thank-you page, a
 * receipt. A test run writes them beside the other artifacts, so it never dirties the checkout;
 * `POS_UPDATE_SCREENS=1` writes them into docs/screens/ to refresh the committed ones.
 */
const SCREENS = process.env.POS_UPDATE_SCREENS === '1' ? fileURLToPath(new URL('../docs/screens/', import.meta.url)) : ARTIFACTS;
/** Playwright's launch() already gives each browser a fresh temporary profile (user-data-dir). */
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
/** iPhone 12-ish: the narrow screen the page must work on. */
const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 900 };

const hasChromium = haveChromium();
/**
 * A browser test walks several pages (checkout, a 3-D Secure challenge, the shop's return page)
 * with Chromium sharing two cores with the servers; 60 s leaves room on a loaded machine where the
 * suite's 30 s did not.
 */
const BROWSER_TEST_TIMEOUT_MS = 60_000;

let offset = 0;
const clock = { now: () => Date.now() + offset };

let t: TestServer;
let m: CreatedMerchant;
let api: ReturnType<typeof client>;
let browser: Browser;
let shop: Server;
let shopUrl: string;
let context: BrowserContext | undefined;
/** CSP violations and uncaught script errors seen by the current test's pages. */
let problems: string[] = [];

beforeAll(async () => {
  if (!hasChromium) return;
  mkdirSync(ARTIFACTS, { recursive: true });
  // Polling stays out of the way: outcomes here must come from processor events.
  t = await startTestServer({ reconcileIntervalMs: 60_000 }, { clock });
  m = await t.merchant('Corner Café');
  api = client(t.url, m.keys.sk_test);
  // The merchant's own site, where success_url and cancel_url point.
  shop = createServer((req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(`<h1>Shop ${req.url}</h1>`));
  await new Promise<void>((resolve) => shop.listen(0, '127.0.0.1', resolve));
  shopUrl = `http://127.0.0.1:${(shop.address() as AddressInfo).port}`;
  browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS });
});

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => shop?.close(resolve));
  await t?.stop();
});

afterEach(async () => {
  await context?.close();
  context = undefined;
  offset = 0;
  expect(problems).toEqual([]);
  problems = [];
});

async function phonePage(): Promise<Page> {
  context = await browser.newContext({ viewport: PHONE, isMobile: true, hasTouch: true, deviceScaleFactor: 2 });
  const page = await context.newPage();
  page.on('console', (msg) => {
    if (msg.type() === 'error' && /Content.Security.Policy/i.test(msg.text())) problems.push(msg.text());
  });
  page.on('pageerror', (err) => problems.push(err.message));
  return page;
}

type Session = Json & { id: string; reference: string; url: string; transaction_id: string };
type Link = Json & { id: string; reference: string; url: string };

async function session(body: Json = {}): Promise<Session> {
  const res = await api.post<{ data: Session }>('/v1/checkout/sessions', {
    amount: 4750,
    description: 'Two flat whites and a croissant',
    success_url: `${shopUrl}/thanks?session={CHECKOUT_SESSION_ID}`,
    cancel_url: `${shopUrl}/cart`,
    ...body,
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data;
}

async function transactionStatus(id: string): Promise<string> {
  return ((await api.get<{ data: { status: string } }>(`/v1/transactions/${id}`)).body.data).status;
}

async function until(id: string, status: string): Promise<void> {
  await eventually(async () => ((await transactionStatus(id)) === status ? true : undefined));
}

async function fillCard(page: Page, number: string): Promise<void> {
  await page.getByLabel('Card number').fill(number);
  await page.getByLabel('Expiry (MM/YY)').fill('12/34');
  await page.getByLabel('Security code').fill('123');
}

async function focused(page: Page): Promise<string | undefined> {
  return page.evaluate<string | undefined>('document.activeElement?.id');
}

async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: `${ARTIFACTS}${name}.png`, fullPage: true });
}

describe.skipIf(!hasChromium)('hosted checkout in a browser', { timeout: BROWSER_TEST_TIMEOUT_MS }, () => {
  it('pays with 4242: collects every field, redirects to success_url, and only the webhook fulfils', async () => {
    const s = await session({ customer_email: 'ada@example.com', customer_name: 'Ada Lovelace', collect_email: true, collect_name: true, collect_phone: true, collect_address: true });
    const page = await phonePage();
    const response = await page.goto(s.url);
    expect(response?.status()).toBe(200);
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('$47.50');
    expect(await page.textContent('main')).toContain('Corner Café');
    expect(await page.textContent('main')).toContain('Two flat whites and a croissant');
    expect(await page.getByLabel('Email').inputValue()).toBe('ada@example.com');
    expect(await page.getByLabel('Full name').inputValue()).toBe('Ada Lovelace');
    // Nothing wider than the phone.
    expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth')).toBe(true);
    await page.getByLabel('Phone').fill('+1 415 555 0100');
    await page.getByLabel('Address', { exact: true }).fill('1 Infinite Loop');
    await page.getByLabel('City').fill('Cupertino');
    await page.getByLabel('Postal code').fill('95014');
    await page.getByLabel('Country code').fill('us');
    await fillCard(page, '4242 4242 4242 4242');
    await shot(page, 'checkout-session');

    // Hold the processor's events: the browser's return must not fulfil anything by itself.
    const control = t.stack.simulator!.control;
    await control.setWebhookFaults({ hold: true });
    try {
      await page.getByRole('button', { name: 'Pay $47.50' }).click();
      await page.waitForURL(`${shopUrl}/thanks?session=${s.reference}`);
      expect(await transactionStatus(s.transaction_id)).toBe('pending');
      expect((await api.get<{ data: { status: string } }>(`/v1/checkout/sessions/${s.id}`)).body.data.status).toBe('open');
    } finally {
      await control.setWebhookFaults({ hold: false });
      await control.releaseHeldWebhooks();
    }
    await until(s.transaction_id, 'succeeded');
    const done = (await api.get<{ data: Json }>(`/v1/checkout/sessions/${s.id}`)).body.data;
    expect(done).toMatchObject({
      status: 'complete',
      customer_details: { email: 'ada@example.com', name: 'Ada Lovelace', phone: '+1 415 555 0100', address: { line1: '1 Infinite Loop', city: 'Cupertino', postal_code: '95014', country: 'US' } },
    });
    expect((await eventsOf(t.dataDir, s.transaction_id)).map((e) => e.type)).toContain('payment.succeeded');
    const txn = (await api.get<{ data: Json }>(`/v1/transactions/${s.transaction_id}`)).body.data;
    expect(txn).toMatchObject({ card_brand: 'visa', card_last_four: '4242', source: 'checkout' });

    // A paid session's page says so.
    await page.goto(s.url);
    expect(await page.textContent('h1')).toBe('This payment is complete');
    await shot(page, 'checkout-complete');
  });

  it('by keyboard alone: validates fields, shows a decline, and takes a retry on the same payment', async () => {
    const s = await session({ collect_email: true });
    const page = await phonePage();
    await page.goto(s.url);
    // Submitting empty names each problem next to its field and moves focus to the first.
    await page.keyboard.press('Tab');
    expect(await focused(page)).toBe('email');
    await page.getByRole('button', { name: 'Pay $47.50' }).focus();
    await page.keyboard.press('Enter');
    await page.locator('#email-error').waitFor();
    expect(await page.textContent('#email-error')).toBe('Enter your email address.');
    expect(await page.textContent('#card-number-error')).toBe('Enter your card number.');
    expect(await page.getByLabel('Email').getAttribute('aria-invalid')).toBe('true');
    expect(await focused(page)).toBe('email');
    await shot(page, 'checkout-validation');

    await page.keyboard.type('bo@example.com');
    await page.keyboard.press('Tab');
    await page.keyboard.type('4000 0000 0000 0002');
    await page.keyboard.press('Tab');
    await page.keyboard.type('12/34');
    await page.keyboard.press('Tab');
    await page.keyboard.type('123');
    await page.keyboard.press('Enter');
    const alert = page.getByRole('alert');
    await expect.poll(() => alert.textContent()).toBe('Your card was declined. Try another card.');
    // The alert is announced; focus waits in the card number, selected, ready for another card.
    expect(await focused(page)).toBe('card-number');
    await shot(page, 'checkout-declined');
    await until(s.transaction_id, 'failed');
    const failed = (await api.get<{ data: Json }>(`/v1/transactions/${s.transaction_id}`)).body.data;
    expect(failed).toMatchObject({ failure_code: 'card_declined', decline_code: 'generic_decline' });

    // Insufficient funds reads differently; then a good card goes through on the same payment.
    await page.getByLabel('Card number').fill('4000000000009995');
    await page.getByLabel('Card number').press('Enter');
    await expect.poll(() => alert.textContent()).toBe('Your card has insufficient funds. Try another card.');
    await page.getByLabel('Card number').fill('4242424242424242');
    await page.getByLabel('Card number').press('Enter');
    await page.waitForURL(`${shopUrl}/thanks?session=${s.reference}`);
    await until(s.transaction_id, 'succeeded');
    expect((await eventsOf(t.dataDir, s.transaction_id)).map((e) => e.type)).toEqual(['payment.created', 'payment.failed', 'payment.succeeded']);
  });

  it('3-D Secure completed: the challenge, then back to the page and on to success_url', async () => {
    const s = await session();
    const page = await phonePage();
    await page.goto(s.url);
    await fillCard(page, '4000002500003155');
    await page.getByRole('button', { name: /^Pay/ }).click();
    await page.waitForURL(/\/_sim\/3ds\//);
    await shot(page, 'checkout-3ds-challenge');
    await page.getByRole('button', { name: 'Complete authentication' }).click();
    await page.waitForURL(`${shopUrl}/thanks?session=${s.reference}`);
    await until(s.transaction_id, 'succeeded');
    expect((await eventsOf(t.dataDir, s.transaction_id)).map((e) => e.type)).toContain('payment.succeeded');
  });

  it('3-D Secure failed: the page explains, and a retry with another card succeeds', async () => {
    const s = await session();
    const page = await phonePage();
    await page.goto(s.url);
    await fillCard(page, '4000002500003155');
    await page.getByRole('button', { name: /^Pay/ }).click();
    await page.waitForURL(/\/_sim\/3ds\//);
    await page.getByRole('button', { name: 'Fail authentication' }).click();
    await page.waitForURL(s.url);
    await expect.poll(() => page.getByRole('alert').textContent()).toBe('We could not confirm the payment with your bank. Try again or use another card.');
    // The client_secret the processor put in the return address is gone from the address bar.
    expect(page.url()).toBe(s.url);
    await shot(page, 'checkout-3ds-failed');
    await until(s.transaction_id, 'failed');
    await fillCard(page, '4242424242424242');
    await page.getByRole('button', { name: /^Pay/ }).click();
    await page.waitForURL(`${shopUrl}/thanks?session=${s.reference}`);
    await until(s.transaction_id, 'succeeded');
  });

  it('cancel goes back to cancel_url and changes nothing', async () => {
    const s = await session();
    const page = await phonePage();
    await page.goto(s.url);
    await page.getByRole('link', { name: 'Cancel and return to Corner Café' }).click();
    await page.waitForURL(`${shopUrl}/cart`);
    expect(await transactionStatus(s.transaction_id)).toBe('pending');
  });

  it('an expired session refuses payment: 410 page, and an open page refuses on submit', async () => {
    const s = await session({ expires_in: 300 });
    const page = await phonePage();
    await page.goto(s.url);
    await fillCard(page, '4242424242424242');
    offset = 301_000;
    await page.getByRole('button', { name: /^Pay/ }).click();
    await expect.poll(() => page.textContent('h1')).toBe('This checkout session has expired');
    const again = await page.goto(s.url);
    expect(again?.status()).toBe(410);
    await shot(page, 'checkout-expired');
    await until(s.transaction_id, 'canceled');
  });
});

describe.skipIf(!hasChromium)('payment links in a browser', { timeout: BROWSER_TEST_TIMEOUT_MS }, () => {
  it('is paid twice, each a transaction of its own; deactivated, the page refuses payment (410)', async () => {
    const res = await api.post<{ data: Link }>('/v1/payment-links', { amount: 1200, currency: 'eur', description: 'Tote bag', customer_email: 'fan@example.com' });
    const l = res.body.data;
    const page = await phonePage();
    const transactions: string[] = [];
    for (const run of [1, 2]) {
      await page.goto(l.url);
      await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('€12.00');
      expect(await page.getByLabel('Email').inputValue()).toBe('fan@example.com');
      await fillCard(page, '4242424242424242');
      if (run === 1) await shot(page, 'payment-link');
      await page.getByRole('button', { name: 'Pay €12.00' }).click();
      await expect.poll(() => page.textContent('#done-message')).toBe('Payment received. Thank you! Keep the reference below; you can close this page.');
      if (run === 1) await shot(page, 'payment-link-paid');
      transactions.push(...(await eventually(async () => {
        const list = await api.get<{ data: { id: string; payment_link_id: string | null; status: string }[] }>('/v1/transactions?size=100');
        const mine = list.body.data.filter((x) => x.payment_link_id === l.id && x.status === 'succeeded').map((x) => x.id);
        return mine.length === run ? mine : undefined;
      })));
    }
    expect(new Set(transactions).size).toBe(2);
    for (const id of transactions) expect((await eventsOf(t.dataDir, id)).map((e) => e.type)).toContain('payment.succeeded');

    // A page opened before the link is deactivated refuses on submit; a fresh visit gets 410.
    await page.goto(l.url);
    await fillCard(page, '4242424242424242');
    expect((await api.delete(`/v1/payment-links/${l.id}`)).status).toBe(200);
    await page.getByRole('button', { name: 'Pay €12.00' }).click();
    await expect.poll(() => page.textContent('h1')).toBe('This payment link is no longer active');
    const gone = await page.goto(l.url);
    expect(gone?.status()).toBe(410);
    await shot(page, 'payment-link-deactivated');
  });
});

describe.skipIf(!hasChromium)('card formatting, the thank-you page and the receipt', { timeout: BROWSER_TEST_TIMEOUT_MS }, () => {
  /** A paid terminal payment's receipt (the one with every EMV line), made once for both screens. */
  let terminalReceipt: string | undefined;
  async function paidAtTheCounter(): Promise<string> {
    if (terminalReceipt) return terminalReceipt;
    await api.post('/v1/terminal/locations', { display_name: 'Front counter', address: { line1: '12 Harbour Street', city: 'Portland', state: 'ME', postal_code: '04101', country: 'US' } });
    const reader = (await api.post<{ data: { processor_terminal_id: string } }>('/v1/terminals', { name: 'Till 1', registration_code: 'simulated-wpe' })).body.data;
    const created = (await api.post<{ data: { id: string; payment_intent_id: string } }>('/v1/terminal/create-payment', { amount: 1850, description: 'Lunch' })).body.data;
    await api.post('/v1/terminal/process-payment', { payment_intent_id: created.payment_intent_id, reader_id: reader.processor_terminal_id });
    const tap = await api.post<{ data: { status: string } }>('/v1/terminal/simulate-payment', { reader_id: reader.processor_terminal_id, amount_tip: 300 });
    expect(tap.body.data.status).toBe('succeeded');
    terminalReceipt = await eventually(async () => (await api.get<{ data: { receipt_url: string | null } }>(`/v1/transactions/${created.id}`)).body.data.receipt_url ?? undefined);
    return terminalReceipt;
  }

  it.each([
    ['1280', DESKTOP],
    ['390', PHONE],
  ])('at %s px: spaces the number and names its brand, writes 1230 as 12/30, then shows the reference and the receipt', async (width, viewport) => {
    context = await browser.newContext({ viewport, deviceScaleFactor: 1, ...(viewport === PHONE ? { isMobile: true, hasTouch: true } : {}) });
    const page = await context.newPage();
    page.on('console', (msg) => {
      if (msg.type() === 'error' && /Content.Security.Policy/i.test(msg.text())) problems.push(msg.text());
    });
    page.on('pageerror', (err) => problems.push(err.message));

    // A customer_email alone is enough for the page to ask for the email (prefilled).
    const s = await session({ success_url: undefined, customer_email: 'ada@example.com' });
    await page.goto(s.url);
    expect(await page.getByLabel('Email').inputValue()).toBe('ada@example.com');
    const number = page.getByLabel('Card number');
    await number.pressSequentially('378282246310005');
    expect(await number.inputValue()).toBe('3782 822463 10005');
    expect(await page.getAttribute('#card-brand', 'data-brand')).toBe('amex');
    await number.fill('');
    await number.pressSequentially('4242424242424242');
    expect(await number.inputValue()).toBe('4242 4242 4242 4242');
    expect(await page.textContent('#card-brand')).toBe('VISA');
    const expiry = page.getByLabel('Expiry (MM/YY)');
    await expiry.pressSequentially('1230');
    expect(await expiry.inputValue()).toBe('12/30');
    await page.getByLabel('Security code').pressSequentially('123');
    await page.screenshot({ path: `${SCREENS}checkout-card-${width}.png`, fullPage: true });

    await page.getByRole('button', { name: 'Pay $47.50' }).click();
    await expect.poll(() => page.textContent('#done-reference'), { timeout: 20_000 }).toMatch(/^txn_/);
    await page.locator('#receipt-link').waitFor({ state: 'visible', timeout: 20_000 });
    await page.screenshot({ path: `${SCREENS}checkout-success-${width}.png`, fullPage: true });
    const reference = await page.textContent('#done-reference');
    const receiptUrl = String(await page.getAttribute('#receipt-link', 'href'));
    expect(receiptUrl).toMatch(new RegExp(`^${t.url}/receipts/[0-9A-Za-z]{32}$`));
    await page.goto(receiptUrl);
    expect(await page.textContent(`[data-key="reference"]`)).toBe(reference);
    expect(await page.textContent(`[data-key="card"]`)).toBe('Visa •••• 4242');

    // The counter's receipt: every line an EMV receipt must carry, headed with the shop's address.
    await page.goto(await paidAtTheCounter());
    for (const key of ['date', 'time', 'reference', 'subtotal', 'tip', 'total', 'card', 'entry_mode', 'application', 'aid', 'authorization_code']) {
      expect(await page.locator(`[data-key="${key}"]`).count(), key).toBe(1);
    }
    expect(await page.textContent('[data-key="total"]')).toBe('$21.50');
    expect(await page.textContent('address')).toContain('12 Harbour Street');
    expect(await page.textContent('.notice')).toBe('TEST MODE: no money moved');
    await page.screenshot({ path: `${SCREENS}receipt-${width}.png`, fullPage: true });

    const icon = await page.request.get(`${t.url}/favicon.ico`);
    expect(icon.status()).toBe(200);
    expect(icon.headers()['content-type']).toBe('image/x-icon');
  });
});

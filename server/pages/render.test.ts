import { describe, expect, it } from 'vitest';
import type { PageView } from '../checkout/pages.js';
import { contentSecurityPolicy } from '../routes/pages.js';
import { escape, renderClosedPage, renderPaymentPage } from './render.js';

const assets = { script: '/checkout-assets/checkout.js?v=1', style: '/checkout-assets/checkout.css?v=1' };
const view: PageView = {
  kind: 'session',
  reference: 'cs_x',
  state: 'payable',
  mode: 'test',
  merchantName: 'Bob "The" <Baker>',
  description: "Crème brûlée & 'tea'",
  amount: 1050,
  currency: 'jpy',
  collect: { email: true, name: false, phone: false, address: true },
  prefill: { email: 'a"><script>@x.co', name: null },
  successUrl: null,
  cancelUrl: 'https://shop.example/?a=1&b=2',
  paid: null,
  wallets: { applePay: false, googlePay: false },
};

describe('hosted page HTML', () => {
  it('escapes everything the merchant or customer controls', () => {
    expect(escape(`<a href="x" onclick='y'>&</a>`)).toBe('&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;&lt;/a&gt;');
    const html = renderPaymentPage(view, { kind: 'simulator', publishableKey: 'pk_test_1', apiUrl: 'http://127.0.0.1:1' }, assets, '/checkout/cs_x/start');
    expect(html).toContain('Bob &quot;The&quot; &lt;Baker&gt;');
    expect(html).toContain('value="a&quot;&gt;&lt;script&gt;@x.co"');
    expect(html).toContain('href="https://shop.example/?a=1&amp;b=2"');
    expect(html).not.toMatch(/<script>|\sstyle=|\son\w+=/);
  });

  it('formats the amount in the currency and asks only for the collected fields', () => {
    const html = renderPaymentPage(view, { kind: 'simulator', publishableKey: 'pk_test_1', apiUrl: 'http://127.0.0.1:1' }, assets, '/s');
    expect(html).toContain('Pay ¥1,050');
    expect(html).toContain('id="email"');
    expect(html).toContain('id="address-line1"');
    expect(html).not.toContain('id="name"');
    expect(html).not.toContain('js.stripe.com');
  });

  it('uses the Payment Element and Stripe.js in stripe mode', () => {
    const html = renderPaymentPage(view, { kind: 'stripe', publishableKey: 'pk_test_1', apiUrl: null }, assets, '/s');
    expect(html).toContain('<script src="https://js.stripe.com/v3/"></script>');
    expect(html).toContain('id="payment-element"');
    expect(html).not.toContain('id="card-number"');
  });

  it('renders closed pages without a form', () => {
    const html = renderClosedPage({ ...view, state: 'expired' }, assets);
    expect(html).toContain('This checkout session has expired');
    expect(html).not.toContain('<form');
  });
});

describe('Content-Security-Policy', () => {
  it('allows only our origin and the processor', () => {
    const sim = contentSecurityPolicy({ kind: 'simulator', publishableKey: () => null, browserUrl: () => 'http://127.0.0.1:5555/' });
    expect(sim).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self' http://127.0.0.1:5555; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
    );
    const stripe = contentSecurityPolicy({ kind: 'stripe', publishableKey: () => null, browserUrl: () => null });
    expect(stripe).toContain("script-src 'self' https://js.stripe.com");
    expect(stripe).toContain('frame-src https://js.stripe.com https://hooks.stripe.com');
    expect(stripe).toContain("connect-src 'self' https://api.stripe.com");
  });
});

// The hosted checkout / payment-link page script. Served same-origin (CSP script-src 'self');
// it reads its settings from data attributes of <main id="checkout">, asks our server for the
// payment's client_secret only when the customer submits, and sends the card straight to the
// processor: the simulator's Stripe-style confirm endpoint, or Stripe's Payment Element. The
// server learns the outcome from the processor, never from this page.

const root = document.getElementById('checkout');
if (root) init(root);

function init(root) {
  const cfg = root.dataset;
  const form = document.getElementById('pay-form');
  const button = document.getElementById('pay-button');
  const formError = document.getElementById('form-error');
  const done = document.getElementById('done');
  const payLabel = button.textContent;
  const returnUrl = location.origin + location.pathname;
  const txnKey = `pos-checkout:${cfg.reference}`;
  // Stripe.js comes from js.stripe.com: a blocker, a network that stops it or an unknown key leaves
  // no payment form, and a Pay button that did nothing would look like a broken shop. Say so instead.
  let stripeUi = null;
  if (cfg.processor === 'stripe') {
    try {
      if (typeof window.Stripe !== 'function') throw new Error('Stripe.js did not load');
      stripeUi = setUpStripe(cfg);
    } catch {
      button.disabled = true;
      formError.textContent =
        'The secure card form could not load (Stripe.js did not load). Nothing was charged. Check your connection, allow js.stripe.com if a blocker stops it, and reload this page.';
      formError.hidden = false;
      return;
    }
  }

  // Back from a 3-D Secure challenge: the processor put the intent in the query string.
  const params = new URLSearchParams(location.search);
  if (params.get('payment_intent') && params.get('payment_intent_client_secret')) {
    const secret = params.get('payment_intent_client_secret');
    // Keep the client_secret out of the address bar and history.
    history.replaceState(null, '', location.pathname);
    busy(true, 'Checking your payment…');
    retrieveIntent(params.get('payment_intent'), secret)
      .then((intent) => settle(intent))
      .catch(() => fail('We could not check your payment. Please try again.'));
  }

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    if (!validate()) return;
    pay().catch(() => fail('Something went wrong. Check your connection and try again.'));
  });

  async function pay() {
    clearError();
    if (stripeUi) {
      const submitted = await stripeUi.elements.submit();
      if (submitted.error) return fail(submitted.error.message);
    }
    busy(true, 'Processing…');
    const started = await startPayment();
    if (!started) return;
    if (stripeUi) {
      const result = await stripeUi.stripe.confirmPayment({
        elements: stripeUi.elements,
        clientSecret: started.client_secret,
        confirmParams: { return_url: returnUrl, payment_method_data: { billing_details: billingDetails() } },
        redirect: 'if_required',
      });
      if (result.error) return fail(result.error.message);
      return settle(result.paymentIntent);
    }
    const intent = await confirmWithSimulator(started);
    if (intent) settle(intent);
  }

  /** Same-origin: the server checks the page can still be paid and hands out the client_secret. */
  async function startPayment() {
    const details = collected();
    const earlier = sessionStorage.getItem(txnKey);
    if (earlier) details.transaction = earlier;
    const res = await fetch(cfg.startUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(details) });
    const body = await res.json();
    if (res.status === 410 || res.status === 409) {
      // Expired, deactivated or already paid meanwhile: the page itself now says so.
      location.reload();
      return null;
    }
    if (!res.ok) {
      const param = body.error && body.error.param;
      if (param && showFieldError(fieldFor(param), body.error.message)) {
        busy(false);
        return null;
      }
      fail(body.error ? body.error.message : 'The payment could not be started.');
      return null;
    }
    sessionStorage.setItem(txnKey, body.data.transaction);
    return body.data;
  }

  async function confirmWithSimulator(started) {
    const [month, year] = value('card-expiry').split('/').map((s) => s.trim());
    const data = new URLSearchParams();
    data.set('client_secret', started.client_secret);
    data.set('return_url', returnUrl);
    data.set('payment_method_data[type]', 'card');
    data.set('payment_method_data[card][number]', digits(value('card-number')));
    data.set('payment_method_data[card][exp_month]', String(Number(month)));
    data.set('payment_method_data[card][exp_year]', String(2000 + Number(year.slice(-2))));
    data.set('payment_method_data[card][cvc]', digits(value('card-cvc')));
    const billing = billingDetails();
    for (const [key, v] of Object.entries(billing)) {
      if (typeof v === 'string') data.set(`payment_method_data[billing_details][${key}]`, v);
      else for (const [part, pv] of Object.entries(v)) data.set(`payment_method_data[billing_details][${key}][${part}]`, pv);
    }
    const res = await fetch(`${cfg.processorUrl}/v1/payment_intents/${encodeURIComponent(started.payment_intent)}/confirm`, {
      method: 'POST',
      headers: { authorization: `Bearer ${cfg.publishableKey}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: data,
    });
    const body = await res.json();
    if (body.error) {
      fail(declineMessage(body.error));
      return null;
    }
    return body;
  }

  async function retrieveIntent(id, secret) {
    if (stripeUi) return (await stripeUi.stripe.retrievePaymentIntent(secret)).paymentIntent;
    const res = await fetch(`${cfg.processorUrl}/v1/payment_intents/${encodeURIComponent(id)}?client_secret=${encodeURIComponent(secret)}`, {
      headers: { authorization: `Bearer ${cfg.publishableKey}` },
    });
    if (!res.ok) throw new Error('retrieve failed');
    return res.json();
  }

  /** What the processor says now decides what the customer sees next. */
  function settle(intent) {
    if (intent.status === 'succeeded' || intent.status === 'processing' || intent.status === 'requires_capture') return succeed();
    if (intent.status === 'requires_action' && intent.next_action && intent.next_action.redirect_to_url) {
      busy(true, 'Redirecting to your bank to confirm it is you…');
      location.assign(intent.next_action.redirect_to_url.url);
      return;
    }
    if (intent.last_payment_error) return fail(declineMessage(intent.last_payment_error));
    busy(false);
  }

  function succeed() {
    const transaction = sessionStorage.getItem(txnKey);
    sessionStorage.removeItem(txnKey);
    form.hidden = true;
    done.hidden = false;
    // Paid: there is nothing left to cancel.
    const cancel = document.getElementById('cancel-link');
    if (cancel) cancel.parentElement.hidden = true;
    const message = document.getElementById('done-message');
    if (cfg.successUrl) {
      message.textContent = 'Payment received. Taking you back…';
      location.assign(cfg.successUrl);
      return;
    }
    message.textContent = 'Payment received. Thank you! Keep the reference below; you can close this page.';
    done.focus();
    if (transaction) showResult(transaction, 0);
  }

  /**
   * The reference at once, and the receipt link once the processor has reported the payment to
   * our server (usually within a second): asked again every second, for at most RESULT_TRIES.
   */
  const RESULT_TRIES = 20;
  function showResult(transaction, attempt) {
    const url = `${cfg.startUrl.replace(/\/start$/, '')}/payments/${encodeURIComponent(transaction)}`;
    fetch(url, { headers: { accept: 'application/json' } })
      .then((res) => (res.ok ? res.json() : null))
      .then((body) => {
        const result = body && body.data;
        if (result) {
          document.getElementById('done-reference').textContent = result.reference;
          document.getElementById('done-details').hidden = false;
          if (result.receipt_url) {
            document.getElementById('receipt-link').href = result.receipt_url;
            document.getElementById('done-receipt').hidden = false;
            return;
          }
        }
        if (attempt + 1 < RESULT_TRIES) setTimeout(() => showResult(transaction, attempt + 1), 1000);
      })
      .catch(() => attempt + 1 < RESULT_TRIES && setTimeout(() => showResult(transaction, attempt + 1), 1000));
  }

  function fail(message) {
    busy(false);
    formError.textContent = message;
    formError.hidden = false;
    formError.focus();
    const number = document.getElementById('card-number');
    if (number) number.select();
  }

  function clearError() {
    formError.hidden = true;
    formError.textContent = '';
  }

  function busy(on, label) {
    button.disabled = on;
    button.textContent = on && label ? label : payLabel;
    button.setAttribute('aria-busy', String(on));
  }

  // --- fields ---------------------------------------------------------------------------------

  function value(id) {
    const el = document.getElementById(id);
    return el ? el.value.trim() : '';
  }

  function digits(s) {
    return s.replace(/\D/g, '');
  }

  function collected() {
    const details = {};
    for (const id of ['email', 'name', 'phone']) if (document.getElementById(id)) details[id] = value(id);
    if (document.getElementById('address-line1')) {
      details.address = { line1: value('address-line1'), city: value('address-city'), postal_code: value('address-postal-code'), country: value('address-country') };
      if (value('address-line2')) details.address.line2 = value('address-line2');
    }
    return details;
  }

  function billingDetails() {
    const d = collected();
    const billing = {};
    if (d.email) billing.email = d.email;
    if (d.name) billing.name = d.name;
    if (d.phone) billing.phone = d.phone;
    if (d.address) billing.address = d.address;
    return billing;
  }

  /** The server names nested params as address[city]; the page's field ids are address-city. */
  function fieldFor(param) {
    const map = { 'address[line1]': 'address-line1', 'address[city]': 'address-city', 'address[postal_code]': 'address-postal-code', 'address[country]': 'address-country', address: 'address-line1' };
    return map[param] || param;
  }

  const RULES = {
    email: (v) => (!v ? 'Enter your email address.' : /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(v) ? '' : 'Enter an email address like name@example.com.'),
    name: (v) => (v ? '' : 'Enter your full name.'),
    phone: (v) => (!v ? 'Enter your phone number.' : /^\+?[0-9 ()-]{6,20}$/.test(v) ? '' : 'Enter a phone number using digits, spaces and an optional leading +.'),
    'address-line1': (v) => (v ? '' : 'Enter your street address.'),
    'address-city': (v) => (v ? '' : 'Enter your city.'),
    'address-postal-code': (v) => (v ? '' : 'Enter your postal code.'),
    'address-country': (v) => (/^[A-Za-z]{2}$/.test(v) ? '' : 'Enter a two-letter country code, for example US.'),
    'card-number': (v) => {
      const n = digits(v);
      if (!n) return 'Enter your card number.';
      return n.length >= 12 && n.length <= 19 && luhn(n) ? '' : 'Your card number is incomplete or incorrect.';
    },
    'card-expiry': (v) => {
      const m = /^(\d{1,2})\s*\/\s*(\d{2}|\d{4})$/.exec(v);
      if (!m) return 'Enter the expiry date as MM/YY.';
      const month = Number(m[1]);
      const year = 2000 + Number(m[2].slice(-2));
      const now = new Date();
      if (month < 1 || month > 12) return 'The expiry month must be between 01 and 12.';
      if (year < now.getFullYear() || (year === now.getFullYear() && month < now.getMonth() + 1)) return 'Your card has expired.';
      return '';
    },
    'card-cvc': (v) => (/^\d{3,4}$/.test(v) ? '' : 'Enter the 3 or 4 digit security code.'),
  };

  function validate() {
    clearError();
    let first = null;
    for (const [id, rule] of Object.entries(RULES)) {
      const el = document.getElementById(id);
      if (!el) continue;
      const message = rule(el.value.trim());
      showFieldError(id, message);
      if (message && !first) first = el;
    }
    if (first) first.focus();
    return !first;
  }

  function showFieldError(id, message) {
    const el = document.getElementById(id);
    const error = document.getElementById(`${id}-error`);
    if (!el || !error) return false;
    error.textContent = message || '';
    error.hidden = !message;
    if (message) el.setAttribute('aria-invalid', 'true');
    else el.removeAttribute('aria-invalid');
    if (message) el.focus();
    return Boolean(message);
  }

  // Formatting as the customer types: the number in groups (4 4 4 4, or 4 6 5 for Amex) with the
  // brand shown, and the expiry as MM/YY ("1230" becomes "12/30").
  const number = document.getElementById('card-number');
  const brandMark = document.getElementById('card-brand');
  if (number) {
    number.addEventListener('input', () => {
      reformat(number, formatCardNumber(number.value));
      const brand = cardBrand(digits(number.value));
      if (brandMark) {
        brandMark.dataset.brand = brand;
        brandMark.textContent = BRAND_NAMES[brand] || '';
      }
    });
  }
  const expiry = document.getElementById('card-expiry');
  if (expiry) {
    expiry.addEventListener('input', (event) => {
      reformat(expiry, formatExpiry(expiry.value, String(event.inputType || '').startsWith('delete')));
    });
  }

  for (const id of Object.keys(RULES)) {
    const el = document.getElementById(id);
    if (el) el.addEventListener('input', () => el.getAttribute('aria-invalid') && showFieldError(id, RULES[id](el.value.trim())));
  }
}

const BRAND_NAMES = { visa: 'VISA', mastercard: 'Mastercard', amex: 'AMEX', discover: 'Discover', diners: 'Diners', jcb: 'JCB', unionpay: 'UnionPay' };

/** The brand by the number's leading digits (the schemes' published ranges). */
function cardBrand(number) {
  if (/^4/.test(number)) return 'visa';
  if (/^(5[1-5]|2(2[2-9]|[3-6]\d|7[01]|720))/.test(number)) return 'mastercard';
  if (/^3[47]/.test(number)) return 'amex';
  if (/^(6011|65|64[4-9])/.test(number)) return 'discover';
  if (/^(36|30[0-5]|38)/.test(number)) return 'diners';
  if (/^35/.test(number)) return 'jcb';
  if (/^62/.test(number)) return 'unionpay';
  return 'unknown';
}

/** "4242424242424242" → "4242 4242 4242 4242"; Amex 4 6 5, 14-digit Diners 4 6 4; at most 19 digits. */
function formatCardNumber(value) {
  const number = value.replace(/\D/g, '').slice(0, 19);
  const brand = cardBrand(number);
  const groups = brand === 'amex' ? [4, 6, 5] : brand === 'diners' && number.length <= 14 ? [4, 6, 4] : [4, 4, 4, 4, 3];
  const parts = [];
  let at = 0;
  for (const size of groups) {
    if (at >= number.length) break;
    parts.push(number.slice(at, at + size));
    at += size;
  }
  return parts.join(' ');
}

/**
 * "1230" → "12/30", "4" → "04/" (no month starts with 4), "12" → "12/" while typing forwards; a
 * four-digit year (browser autofill, "12/2030") keeps its last two digits.
 */
function formatExpiry(value, deleting) {
  const slash = value.indexOf('/');
  if (slash >= 0 && value.slice(slash + 1).replace(/\D/g, '').length === 4) {
    const month = value.slice(0, slash).replace(/\D/g, '').padStart(2, '0').slice(-2);
    return `${month}/${value.slice(slash + 1).replace(/\D/g, '').slice(2)}`;
  }
  let d = value.replace(/\D/g, '').slice(0, 4);
  if (d.length === 1 && d > '1') d = `0${d}`;
  if (d.length > 2) return `${d.slice(0, 2)}/${d.slice(2)}`;
  if (d.length === 2 && !deleting) return `${d}/`;
  return d;
}

/** Puts `formatted` in the field, the caret after as many digits as were before it. */
function reformat(input, formatted) {
  if (input.value === formatted) return;
  const caret = input.selectionStart ?? input.value.length;
  const digitsBefore = input.value.slice(0, caret).replace(/\D/g, '').length;
  input.value = formatted;
  let position = 0;
  for (let seen = 0; position < formatted.length && seen < digitsBefore; position += 1) if (/\d/.test(formatted[position])) seen += 1;
  if (position < formatted.length && formatted[position] === '/' && digitsBefore === 2) position += 1;
  if (caret >= input.value.length || digitsBefore >= formatted.replace(/\D/g, '').length) position = formatted.length;
  input.setSelectionRange(position, position);
}

function luhn(number) {
  let sum = 0;
  for (let i = 0; i < number.length; i += 1) {
    let d = Number(number[number.length - 1 - i]);
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

/** The processor's decline, in words a customer can act on. */
function declineMessage(error) {
  const code = error.decline_code || error.code;
  const known = {
    insufficient_funds: 'Your card has insufficient funds. Try another card.',
    card_declined: 'Your card was declined. Try another card.',
    generic_decline: 'Your card was declined. Try another card.',
    expired_card: 'Your card has expired. Try another card.',
    incorrect_cvc: 'The security code is incorrect. Check it and try again.',
    payment_intent_authentication_failure: 'We could not confirm the payment with your bank. Try again or use another card.',
    test_mode_live_card: 'This is a test page: real cards are declined. Use the test card 4242 4242 4242 4242.',
  };
  return known[code] || error.message || 'Your payment could not be completed. Try another card.';
}

/** Stripe mode: the Payment Element with the platform publishable key and no connected account (spec §1). */
function setUpStripe(cfg) {
  /* global Stripe */
  const stripe = Stripe(cfg.publishableKey);
  const elements = stripe.elements({ mode: 'payment', amount: Number(cfg.amount), currency: cfg.currency, paymentMethodTypes: ['card'] });
  const emailInput = document.getElementById('email');
  const element = elements.create('payment', {
    wallets: { applePay: cfg.applePay === 'true' ? 'auto' : 'never', googlePay: cfg.googlePay === 'true' ? 'auto' : 'never' },
    fields: { billingDetails: { email: emailInput ? 'never' : 'auto' } },
  });
  element.mount('#payment-element');
  return { stripe, elements };
}

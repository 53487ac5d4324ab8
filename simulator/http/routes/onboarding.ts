import { isIP } from 'node:net';
import { type Request, type Response, Router } from 'express';
import { z } from 'zod';
import { SimError } from '../../errors.js';
import type { AccountRow, AccountUpdateInput, IndividualInput, CompanyInput } from '../../engine/connect/accountTypes.js';
import type { AccountLinkRow } from '../../engine/connect/accountLinks.js';
import { systemOrigin } from '../../engine/kernel.js';
import { COUNTRY_RULES, TEST_VALUES, businessKind } from '../../engine/connect/requirements.js';
import { DEFAULT_API_VERSION } from '../endpoint.js';
import { toSimError } from '../params.js';
import type { Services } from '../services.js';

/**
 * The hosted onboarding page an Account Link opens (Stripe's Connect Onboarding, as plain HTML
 * forms): it shows what is due on the account, collects it — typed in, or Stripe's test data at
 * the press of a button — applies it as an account update by the account holder (who may accept
 * the terms of service, which a platform cannot do for Express and Standard accounts), and sends
 * the browser to `return_url` once nothing is left to submit. Every posted byte is validated: bad
 * input is a 400 page, never a 500.
 */

/** A form value: the page's inputs are single text fields, so anything longer is not from it. */
const text = z.string().max(500);
const address = z.object({ line1: text.optional(), line2: text.optional(), city: text.optional(), state: text.optional(), postal_code: text.optional() }).strict();
const formSchema = z
  .object({
    session: text,
    action: z.enum(['submit', 'test_data']),
    business_type: z.enum(['individual', 'company']).optional(),
    individual: z
      .object({
        first_name: text.optional(),
        last_name: text.optional(),
        email: text.optional(),
        phone: text.optional(),
        dob: z.object({ day: text.optional(), month: text.optional(), year: text.optional() }).strict().optional(),
        address: address.optional(),
        ssn_last_4: text.optional(),
        id_number: text.optional(),
      })
      .strict()
      .optional(),
    company: z.object({ name: text.optional(), phone: text.optional(), tax_id: text.optional(), address: address.optional() }).strict().optional(),
    business_profile: z.object({ mcc: text.optional(), url: text.optional(), product_description: text.optional() }).strict().optional(),
    external_account: z.object({ routing_number: text.optional(), account_number: text.optional() }).strict().optional(),
    tos_acceptance: z.literal('accepted').optional(),
  })
  .strict();

type Form = z.infer<typeof formSchema>;

function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);
}

function page(title: string, body: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head><body><h1>${escapeHtml(title)}</h1>${body}</body></html>`;
}

/** Empty inputs are fields the holder left alone, not values to clear. */
function given(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed === undefined || trimmed === '' ? undefined : trimmed;
}

function invalid(message: string, param: string): SimError {
  return new SimError(400, 'invalid_request_error', message, { param });
}

function dobOf(form: Form): IndividualInput['dob'] {
  const dob = form.individual?.dob;
  const parts = [given(dob?.day), given(dob?.month), given(dob?.year)];
  if (parts.every((p) => p === undefined)) return undefined;
  if (!parts.every((p) => p !== undefined && /^\d{1,4}$/.test(p))) throw invalid('Enter the date of birth as day, month and year in digits.', 'individual[dob]');
  const [day, month, year] = parts.map(Number) as [number, number, number];
  return { day, month, year };
}

function addressOf(input: z.infer<typeof address> | undefined, country: string): IndividualInput['address'] {
  if (!input) return undefined;
  const out: NonNullable<IndividualInput['address']> = {};
  for (const key of ['line1', 'line2', 'city', 'state', 'postal_code'] as const) {
    const value = given(input[key]);
    if (value !== undefined) out[key] = value;
  }
  return Object.keys(out).length > 0 ? { ...out, country } : undefined;
}

/** What the holder typed, as an account update. */
function typedInput(form: Form, account: AccountRow): AccountUpdateInput {
  const country = account.body.country ?? 'US';
  const input: AccountUpdateInput = {};
  if (form.business_type && !account.body.business_type) input.business_type = form.business_type;
  const kind = businessKind(input.business_type ?? account.body.business_type) ?? 'individual';
  if (kind === 'individual' && form.individual) {
    const i = form.individual;
    const individual: IndividualInput = {};
    for (const key of ['first_name', 'last_name', 'email', 'phone', 'ssn_last_4', 'id_number'] as const) {
      const value = given(i[key]);
      if (value !== undefined) individual[key] = value;
    }
    const dob = dobOf(form);
    if (dob) individual.dob = dob;
    const addr = addressOf(i.address, country);
    if (addr) individual.address = addr;
    if (Object.keys(individual).length > 0) input.individual = individual;
  }
  if (kind === 'company' && form.company) {
    const c = form.company;
    const company: CompanyInput = {};
    for (const key of ['name', 'phone', 'tax_id'] as const) {
      const value = given(c[key]);
      if (value !== undefined) company[key] = value;
    }
    const addr = addressOf(c.address, country);
    if (addr) company.address = addr;
    if (Object.keys(company).length > 0) input.company = company;
  }
  const profile: Record<string, string> = {};
  for (const key of ['mcc', 'url', 'product_description'] as const) {
    const value = given(form.business_profile?.[key]);
    if (value !== undefined) profile[key] = value;
  }
  if (Object.keys(profile).length > 0) input.business_profile = profile;
  const accountNumber = given(form.external_account?.account_number);
  const routingNumber = given(form.external_account?.routing_number);
  if (accountNumber !== undefined || routingNumber !== undefined) {
    if (accountNumber === undefined) throw invalid('Enter the bank account number.', 'external_account[account_number]');
    input.external_account = {
      object: 'bank_account',
      country,
      currency: account.body.default_currency ?? 'usd',
      account_number: accountNumber,
      ...(routingNumber !== undefined ? { routing_number: routingNumber } : {}),
    };
  }
  return input;
}

/** Stripe's test data that verifies, for everything due ("Use test data"). */
function testInput(account: AccountRow, due: Set<string>): AccountUpdateInput {
  const country = account.body.country ?? 'US';
  const rules = COUNTRY_RULES[country] ?? COUNTRY_RULES.US!;
  const input: AccountUpdateInput = {};
  const kind = businessKind(account.body.business_type) ?? 'individual';
  if (!account.body.business_type) input.business_type = 'individual';
  const testAddress = { line1: TEST_VALUES.line1, city: rules.testAddress.city, postal_code: rules.testAddress.postal_code, country, ...(rules.testAddress.state ? { state: rules.testAddress.state } : {}) };
  if (kind === 'individual') {
    input.individual = {
      first_name: TEST_VALUES.first_name,
      last_name: TEST_VALUES.last_name,
      email: TEST_VALUES.email,
      phone: TEST_VALUES.phone,
      dob: { ...TEST_VALUES.dob },
      address: testAddress,
      ...(rules.personalId === 'ssn_last_4' ? { ssn_last_4: TEST_VALUES.ssn_last_4 } : {}),
      ...(rules.personalId === 'id_number' || due.has('individual.id_number') ? { id_number: TEST_VALUES.id_number } : {}),
    };
  } else {
    input.company = { name: TEST_VALUES.company_name, phone: TEST_VALUES.phone, tax_id: TEST_VALUES.tax_id, address: testAddress };
  }
  input.business_profile = { mcc: TEST_VALUES.mcc, url: TEST_VALUES.url };
  if (due.has('external_account')) {
    input.external_account = { object: 'bank_account', country, currency: account.body.default_currency ?? rules.currency, ...rules.testBank };
  }
  return input;
}

interface Field {
  name: string;
  label: string;
  value: string;
}

const LABELS: Record<string, string> = {
  first_name: 'First name',
  last_name: 'Last name',
  email: 'Email',
  phone: 'Phone',
  ssn_last_4: 'Last 4 digits of the SSN',
  id_number: 'ID number',
  name: 'Legal name',
  tax_id: 'Tax ID',
  line1: 'Address line 1',
  city: 'City',
  state: 'State / province',
  postal_code: 'Postal code',
  mcc: 'Merchant category code (MCC)',
  url: 'Business website',
  product_description: 'Or: what you sell',
};

/** The inputs for the due requirement fields, in the API's parameter names, prefilled with what the account holds. */
function inputsFor(due: string[], account: AccountRow): Field[] {
  const fields: Field[] = [];
  const seen = new Set<string>();
  const body = account.body as unknown as Record<string, unknown>;
  const current = (path: string[]): string => {
    let value: unknown = body;
    for (const part of path) value = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[part] : undefined;
    return typeof value === 'string' || typeof value === 'number' ? String(value) : '';
  };
  const add = (path: string[], label: string, secret = false): void => {
    const name = path[0] + path.slice(1).map((p) => `[${p}]`).join('');
    if (seen.has(name)) return;
    seen.add(name);
    fields.push({ name, label, value: secret ? '' : current(path) });
  };
  for (const requirement of due) {
    const path = requirement.split('.');
    const last = path.at(-1) ?? '';
    if (requirement === 'business_type' || requirement.startsWith('tos_acceptance.')) continue;
    if (requirement === 'external_account') {
      add(['external_account', 'routing_number'], 'Bank routing / sort code (blank for an IBAN)', true);
      add(['external_account', 'account_number'], 'Bank account number or IBAN', true);
      continue;
    }
    if (path[1] === 'dob') {
      for (const part of ['day', 'month', 'year']) add([path[0]!, 'dob', part], `Date of birth: ${part}`);
      continue;
    }
    const secret = last === 'ssn_last_4' || last === 'id_number' || last === 'tax_id';
    add(path, LABELS[last] ?? requirement, secret);
    if (requirement === 'business_profile.url') add(['business_profile', 'product_description'], LABELS.product_description!);
  }
  return fields;
}

function renderForm(link: AccountLinkRow, account: AccountRow, secret: string, due: string[], notice: string | null): string {
  const requirements = account.body.requirements;
  const errors = new Map((requirements?.errors ?? []).map((e) => [e.requirement, e.reason]));
  const action = escapeHtml(new URL(link.body.url).pathname);
  const hidden = `<input type="hidden" name="session" value="${escapeHtml(secret)}">`;
  const kind = account.body.business_type ?? 'individual';
  const typeSelect = due.includes('business_type')
    ? `<p><label>Business type <select name="business_type"><option value="individual"${kind === 'individual' ? ' selected' : ''}>Individual</option><option value="company"${kind === 'company' ? ' selected' : ''}>Company</option></select></label></p>`
    : '';
  const inputs = inputsFor(due, account)
    .map((f) => `<p><label>${escapeHtml(f.label)} <input name="${escapeHtml(f.name)}" value="${escapeHtml(f.value)}"></label></p>`)
    .join('');
  const tos = due.some((f) => f.startsWith('tos_acceptance.'))
    ? '<p><label><input type="checkbox" name="tos_acceptance" value="accepted"> I agree to the Stripe Connected Account Agreement</label></p>'
    : '';
  const errorList = [...errors].map(([requirement, reason]) => `<li><code>${escapeHtml(requirement)}</code>: ${escapeHtml(reason)}</li>`).join('');
  return page(
    'Set up payments (simulator)',
    `<p>Account ${escapeHtml(account.id)} (${escapeHtml(account.body.country ?? '')}).</p>` +
      (notice ? `<p role="alert">${escapeHtml(notice)}</p>` : '') +
      (errorList ? `<ul class="errors">${errorList}</ul>` : '') +
      `<p>Due: ${due.map((f) => `<code>${escapeHtml(f)}</code>`).join(', ') || 'nothing'}</p>` +
      `<form method="post" action="${action}">${hidden}${typeSelect}${inputs}${tos}` +
      '<p><button type="submit" name="action" value="submit">Submit</button> ' +
      '<button type="submit" name="action" value="test_data" formnovalidate>Use test data (verifies)</button></p></form>' +
      '<p>Stripe\'s test values: date of birth 1901-01-01 verifies, 1902-01-01 verifies at once, 1900-01-01 is an OFAC alert and any other fails; ' +
      'address line 1 <code>address_full_match</code> verifies, <code>address_no_match</code> fails; ID number 000000000 verifies, 111111111 fails; phone 0000000000.</p>',
  );
}

function clientIp(req: Request): string {
  const raw = (req.socket.remoteAddress ?? '').replace(/^::ffff:/, '');
  return isIP(raw) !== 0 ? raw : '127.0.0.1';
}

export function onboardingRouter(s: Services): Router {
  const r = Router();
  const path = '/connect/setup/:kind/:account/:token';

  const redirectOrGone = (res: Response, url: string | null): void => {
    if (url) res.redirect(303, url);
    else res.status(410).type('html').send(page('Link expired', '<p>This onboarding link has expired or was already used. Ask the platform for a new one.</p>'));
  };
  const unknown = (res: Response): void => {
    res.status(404).type('html').send(page('Unknown link', '<p>No such onboarding link.</p>'));
  };
  const dueOf = (link: AccountLinkRow, account: AccountRow): string[] => {
    const due = new Set(s.accounts.due(account, link.internal.collect === 'eventually_due'));
    for (const error of account.body.requirements?.errors ?? []) due.add(error.requirement);
    return [...due].sort();
  };

  r.get(path, (req, res) => {
    const visit = s.kernel.store.transaction(() => s.accountLinks.visit(String(req.params.token), String(req.params.account)));
    if (visit.kind === 'unknown') return unknown(res);
    if (visit.kind === 'refresh') return redirectOrGone(res, visit.url);
    res.type('html').send(renderForm(visit.link, visit.account, visit.secret, dueOf(visit.link, visit.account), null));
  });

  r.post(path, (req, res) => {
    const raw = (req.body as Record<string, unknown> | undefined) ?? {};
    const parsed = formSchema.safeParse(raw);
    const secret = typeof raw.session === 'string' ? raw.session : '';
    const visit = s.accountLinks.resume(String(req.params.token), String(req.params.account), secret);
    if (visit.kind === 'unknown') return unknown(res);
    if (visit.kind === 'refresh') return redirectOrGone(res, visit.url);
    const { link } = visit;
    let account = visit.account;
    const fail = (error: SimError): void => {
      const fresh = s.accounts.findConnected(link.livemode, account.id) ?? account;
      res.status(400).type('html').send(renderForm(link, fresh, secret, dueOf(link, fresh), `${error.message}${error.param ? ` (${error.param})` : ''}`));
    };
    if (!parsed.success) return fail(toSimError(parsed.error, raw));
    const form = parsed.data;
    const due = dueOf(link, account);
    try {
      const input = form.action === 'test_data' ? testInput(account, new Set(due)) : typedInput(form, account);
      const accepts = form.action === 'test_data' || form.tos_acceptance === 'accepted';
      if (accepts && due.some((f) => f.startsWith('tos_acceptance.'))) {
        input.tos_acceptance = { date: Math.floor(s.kernel.now() / 1000), ip: clientIp(req), user_agent: String(req.get('user-agent') ?? '').slice(0, 500) };
      }
      const origin = systemOrigin({ livemode: link.livemode, account: null }, DEFAULT_API_VERSION);
      s.kernel.store.transaction(() => s.accounts.update(origin, account.id, input, { hostedPage: true }));
      s.afterCommit();
    } catch (error) {
      if (error instanceof SimError) return fail(error);
      throw error;
    }
    account = s.accounts.findConnected(link.livemode, account.id) ?? account;
    const still = dueOf(link, account).filter((f) => !(account.body.requirements?.errors ?? []).some((e) => e.requirement === f));
    if (still.length > 0) {
      const tosMissing = still.some((f) => f.startsWith('tos_acceptance.'));
      res
        .status(tosMissing && still.every((f) => f.startsWith('tos_acceptance.')) ? 400 : 200)
        .type('html')
        .send(renderForm(link, account, secret, dueOf(link, account), tosMissing ? 'Accept the agreement to finish.' : 'Some information is still due.'));
      return;
    }
    s.kernel.store.transaction(() => s.accountLinks.finish(link));
    if (link.internal.returnUrl) {
      res.redirect(303, link.internal.returnUrl);
      return;
    }
    res.type('html').send(page('Onboarding submitted', `<p>Account ${escapeHtml(account.id)} has submitted its details.</p>`));
  });
  return r;
}


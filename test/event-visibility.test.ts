import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedMerchant } from '../server/accounts/merchants.js';
import { missingPermission } from '../server/accounts/permissions.js';
import { PERMISSIONS, PRESETS, type Permission, type Preset } from '../shared/contract/permissions.js';
import { apiRoutes } from '../server/app.js';
import { routeMatcher } from '../server/http/route-table.js';
import { EVENT_TYPES, recordEvent, type EventType } from '../server/webhooks/outbox.js';
import { client, type Json } from './helpers/api.js';
import { runCli } from './helpers/cli.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { connectRawAgent, openRawStream, type RawStream } from './helpers/sse.js';
import { eventually } from './helpers/tmp.js';

/**
 * What a key may read, it may read everywhere: every key × every event type, through the list
 * (paged and filtered by type), the retrieve and the live stream, shows exactly the events about
 * objects the key may read, and fields of customers only to keys that read customers. The
 * expectation is derived here from the route declarations (which permission reads each kind of object) and
 * the event catalogue, and checked against the table in docs/api-choices.md.
 */

/** The route that reads the object each family of events is about; its documented scope is what seeing the events needs. */
const READ_ROUTE: Record<string, string> = {
  payment: '/v1/transactions/x',
  refund: '/v1/transactions/x/refunds',
  dispute: '/v1/disputes/x',
  payout: '/v1/payouts/x',
  customer: '/v1/customers/x',
  merchant: '/v1/merchant',
  terminal: '/v1/terminal/readers',
  webhook_endpoint: '/v1/webhook-endpoints/x',
};

const routes = routeMatcher(apiRoutes);
const scopeOf = (method: string, path: string) => routes(method, path)?.route.scope;

function familyOf(type: string): string {
  return type.slice(0, type.indexOf('.'));
}

interface Viewer {
  name: string;
  /** null: the secret key. */
  scopes: readonly Permission[] | null;
  key: string;
  stream?: RawStream;
}

function holds(viewer: Viewer, needed: Permission): boolean {
  return viewer.scopes === null || missingPermission(new Set(viewer.scopes), needed) === undefined;
}

/**
 * The expectation: secret keys see everything; `webhooks:write` can subscribe an endpoint of its
 * own to every event, so its key sees every event too; any other key sees an event when it may
 * call the route that reads the event's object.
 */
function sees(viewer: Viewer, type: string): boolean {
  if (viewer.scopes === null || holds(viewer, 'webhooks:write')) return true;
  const path = READ_ROUTE[familyOf(type)];
  if (!path) throw new Error(`no read route known for ${type}: add its family to READ_ROUTE`);
  const needed = scopeOf('GET', path);
  if (needed === undefined || needed === 'secret') throw new Error(`${path} has no permission to read it with`);
  return typeof needed === 'string' ? holds(viewer, needed) : needed.every((p) => holds(viewer, p));
}

function readsCustomers(viewer: Viewer): boolean {
  return sees(viewer, 'customer.created');
}

/** The table "Events each preset sees" of docs/api-choices.md, expanded over the catalogue. */
function documentedTable(): Map<string, Set<string>> {
  const text = readFileSync(new URL('../docs/api-choices.md', import.meta.url), 'utf8');
  const section = text.slice(text.indexOf('**Events each preset sees**'));
  const table = new Map<string, Set<string>>();
  for (const line of section.split('\n').slice(1)) {
    if (table.size > 0 && !line.startsWith('|')) break;
    const row = /^\| `(\w+)` \| (.+?) \|/.exec(line);
    if (!row) continue;
    // What follows a dash only says what the row leaves out.
    const listed = row[2]!.split(' — ')[0]!;
    const patterns = [...listed.matchAll(/`([a-z_.*]+)`/g)].map((m) => m[1]!);
    const all = row[2]!.startsWith('every event');
    table.set(row[1]!, new Set(EVENT_TYPES.filter((type) => all || patterns.some((p) => p === type || (p.endsWith('.*') && type.startsWith(p.slice(0, -1)))))));
  }
  return table;
}

type EventBody = { id: string; type: string; data: Json };
type PageBody = { data: EventBody[]; totalCount: number; lastPage: number };

let t: TestServer;
let m: CreatedMerchant;
const viewers: Viewer[] = [];
/** The matrix's events, one of every type, oldest first. */
const written: { id: string; type: EventType }[] = [];
/** Every event of the merchant, newest first, as the secret key lists them. */
let everything: EventBody[] = [];

async function listAll(key: string, query = ''): Promise<{ ids: string[]; totals: number[]; events: EventBody[] }> {
  const api = client(t.url, key);
  const events: EventBody[] = [];
  const totals: number[] = [];
  for (let page = 1; ; page++) {
    const res = await api.get<PageBody>(`/v1/events?size=4&page=${page}${query}`);
    expect(res.status).toBe(200);
    events.push(...res.body.data);
    totals.push(res.body.totalCount);
    if (page >= res.body.lastPage) break;
  }
  return { ids: events.map((e) => e.id), totals, events };
}

beforeAll(async () => {
  t = await startTestServer();
  m = await t.merchant('Visible Events');
  const owner = client(t.url, m.keys.sk_test);
  const make = async (name: string, scopes: readonly Permission[]): Promise<void> => {
    const res = await owner.post<{ data: { secret: string; scopes: Permission[] } }>('/v1/api-keys', { name, scopes });
    expect(res.status).toBe(201);
    viewers.push({ name, scopes: res.body.data.scopes, key: res.body.data.secret });
  };
  viewers.push({ name: 'secret', scopes: null, key: m.keys.sk_test });
  for (const preset of Object.keys(PRESETS) as Preset[]) await make(preset, PRESETS[preset]);
  // Each read alone, beside the events:read the event routes need.
  for (const permission of PERMISSIONS.filter((p) => p.endsWith(':read') && p !== 'events:read')) await make(permission, ['events:read', permission]);
  for (const viewer of viewers) viewer.stream = await openRawStream(t.url, viewer.key);

  // One event of every type, in one commit, through the outbox every event is written by: each
  // stream is woken once and reads whatever it may see in one pass.
  const scope = { merchantId: m.merchant.id, mode: 'test' as const };
  await t.server.store.transaction(async (trx) => {
    for (const type of EVENT_TYPES) {
      const family = familyOf(type);
      const data: Json =
        family === 'payment'
          ? { object: 'transaction', id: 'txn', receipt_email: 'payer@example.com' }
          : family === 'customer'
            ? { object: 'customer', id: 'cus', name: 'Ada Lovelace', email: 'ada@example.com', phone: '+1 415 555 0100' }
            : { object: family, id: family };
      written.push({ id: await recordEvent(trx, scope, type, `obj_${family}`, data, Date.now()), type });
    }
  });
  everything = (await listAll(m.keys.sk_test)).events;
  expect(new Set(everything.map((e) => e.type))).toEqual(new Set(EVENT_TYPES));
});

afterAll(async () => {
  for (const viewer of viewers) viewer.stream?.close();
  await t?.stop();
});

describe('the documented table', () => {
  it('says per preset exactly the event types the permissions let it see', () => {
    const table = documentedTable();
    expect([...table.keys()].sort()).toEqual(Object.keys(PRESETS).sort());
    for (const preset of Object.keys(PRESETS) as Preset[]) {
      const viewer = { name: preset, scopes: PRESETS[preset], key: '' };
      expect([...table.get(preset)!].sort(), preset).toEqual(EVENT_TYPES.filter((type) => sees(viewer, type)).sort());
    }
  });

  it('keeps customers’ events from a counter key', () => {
    const counter = { name: 'counter', scopes: PRESETS.counter, key: '' };
    expect(EVENT_TYPES.filter((type) => type.startsWith('customer.') && sees(counter, type))).toEqual([]);
    expect(EVENT_TYPES.filter((type) => (type.startsWith('payout.') || type.startsWith('dispute.')) && sees(counter, type))).toEqual([]);
  });
});

describe('every key × every event type', () => {
  it('lists exactly the visible events, newest first, paged and counted over them alone', async () => {
    for (const viewer of viewers) {
      const expected = everything.filter((e) => sees(viewer, e.type));
      const listed = await listAll(viewer.key);
      expect(listed.ids, viewer.name).toEqual(expected.map((e) => e.id));
      expect(new Set(listed.totals), viewer.name).toEqual(new Set([expected.length]));
    }
  });

  it('filters by a type the key sees, and refuses one it does not with 403 naming the permission', async () => {
    for (const viewer of viewers) {
      for (const type of EVENT_TYPES) {
        const res = await client(t.url, viewer.key).get<PageBody & { error: Json }>(`/v1/events?type=${type}`);
        if (sees(viewer, type)) {
          expect(res.status, `${viewer.name} ${type}`).toBe(200);
          expect(res.body.totalCount, `${viewer.name} ${type}`).toBe(everything.filter((e) => e.type === type).length);
          expect(res.body.data.every((e) => e.type === type)).toBe(true);
        } else {
          expect(res.status, `${viewer.name} ${type}`).toBe(403);
          expect(res.body.error).toMatchObject({ type: 'permission_error', code: 'missing_scope', required_scope: scopeOf('GET', READ_ROUTE[familyOf(type)]!) });
        }
      }
    }
  });

  it('retrieves a visible event and answers a hidden one as it answers an unknown id', async () => {
    const unknown = await client(t.url, m.keys.sk_test).get<Json>('/v1/events/evt_NoSuchEvent0000');
    expect(unknown.status).toBe(404);
    for (const viewer of viewers) {
      for (const { id, type } of written) {
        const res = await client(t.url, viewer.key).get<{ data: EventBody } & Json>(`/v1/events/${id}`);
        if (sees(viewer, type)) {
          expect(res.status, `${viewer.name} ${type}`).toBe(200);
          expect(res.body.data).toMatchObject({ id, type });
        } else {
          expect(res.status, `${viewer.name} ${type}`).toBe(404);
          expect(res.body, `${viewer.name} ${type}`).toEqual(unknown.body);
        }
      }
    }
  });

  it('streams exactly the visible events, in order', async () => {
    const streamed = (viewer: Viewer) => viewer.stream!.messages.filter((msg) => msg.event !== 'ready');
    const blind = viewers.filter((viewer) => !written.some((w) => sees(viewer, w.type)));
    for (const viewer of viewers.filter((v) => !blind.includes(v))) {
      const expected = written.filter((w) => sees(viewer, w.type)).map((w) => w.id);
      // One commit wrote them all, so a stream has all it will get once it has the last it may see.
      await eventually(() => viewer.stream!.messages.find((msg) => msg.id === expected.at(-1)), 10_000);
      expect(
        streamed(viewer).map((msg) => msg.id),
        viewer.name,
      ).toEqual(expected);
      expect(streamed(viewer).every((msg) => msg.event === (msg.data as EventBody).type)).toBe(true);
    }
    // Keys that see none of the matrix (checkout, links): every other stream has had
    // its pass over the commit by now; a moment more, and theirs must still be empty.
    expect(blind.map((v) => v.name).sort()).toEqual(['checkout:read', 'payment_links:read']);
    await new Promise((resolve) => setTimeout(resolve, 300));
    for (const viewer of blind) expect(streamed(viewer), viewer.name).toEqual([]);
  });

  it('shows customers’ fields inside the events only to keys that read customers', async () => {
    const payment = written.find((w) => w.type === 'payment.succeeded')!;
    for (const viewer of viewers.filter((v) => sees(v, payment.type))) {
      const email = readsCustomers(viewer) ? 'payer@example.com' : null;
      const listed = (await listAll(viewer.key, '&type=payment.succeeded')).events.find((e) => e.id === payment.id);
      const retrieved = (await client(t.url, viewer.key).get<{ data: EventBody }>(`/v1/events/${payment.id}`)).body.data;
      const streamed = viewer.stream!.messages.find((msg) => msg.id === payment.id)!.data as EventBody;
      for (const event of [listed, retrieved, streamed]) expect(event?.data.receipt_email, viewer.name).toBe(email);
    }
  });
});

describe('customers’ fields in other objects', () => {
  let counter: string;
  let reporting: string;
  beforeAll(() => {
    counter = viewers.find((v) => v.name === 'counter')!.key;
    reporting = viewers.find((v) => v.name === 'reporting')!.key;
  });

  it('hides a payment’s receipt_email from a key without customers:read, in answers, replays, lists and agent pushes', async () => {
    const agent = await connectRawAgent(t.url, counter);
    const ownerAgent = await connectRawAgent(t.url, m.keys.sk_test);
    try {
      const made = await client(t.url, counter).post<{ data: { id: string; receipt_email: string | null } }>('/v1/transactions', { amount: 1250, receipt_email: 'payer@example.com' }, { 'Idempotency-Key': 'visible-1' });
      expect(made.status).toBe(201);
      expect(made.body.data.receipt_email).toBeNull();
      const replay = await client(t.url, counter).post<{ data: { receipt_email: string | null } }>('/v1/transactions', { amount: 1250, receipt_email: 'payer@example.com' }, { 'Idempotency-Key': 'visible-1' });
      expect(replay.status).toBe(200);
      expect(replay.body.data.receipt_email).toBeNull();
      const id = made.body.data.id;
      expect((await client(t.url, counter).get<{ data: Json }>(`/v1/transactions/${id}`)).body.data.receipt_email).toBeNull();
      const list = await client(t.url, counter).get<{ data: Json[] }>('/v1/transactions');
      expect(list.body.data.find((tx) => tx.id === id)?.receipt_email).toBeNull();
      for (const key of [m.keys.sk_test, reporting]) {
        expect((await client(t.url, key).get<{ data: Json }>(`/v1/transactions/${id}`)).body.data.receipt_email).toBe('payer@example.com');
      }
      const pushed = (key: typeof agent) => eventually(() => key.messages.find((msg) => msg.type === 'transaction' && (msg.transaction as Json).id === id), 10_000);
      expect(((await pushed(agent)).transaction as Json).receipt_email).toBeNull();
      expect(((await pushed(ownerAgent)).transaction as Json).receipt_email).toBe('payer@example.com');
    } finally {
      agent.close();
      ownerAgent.close();
    }
  });

  it('hides a payment link’s customer_email from a key without customers:read', async () => {
    const made = await client(t.url, counter).post<{ data: { id: string; customer_email: string | null } }>('/v1/payment-links', { amount: 1999, customer_email: 'gift@example.com' });
    expect(made.status).toBe(201);
    expect(made.body.data.customer_email).toBeNull();
    expect((await client(t.url, counter).get<{ data: Json }>(`/v1/payment-links/${made.body.data.id}`)).body.data.customer_email).toBeNull();
    expect((await client(t.url, m.keys.sk_test).get<{ data: Json }>(`/v1/payment-links/${made.body.data.id}`)).body.data.customer_email).toBe('gift@example.com');
  });
});

describe('the counter’s close-out', () => {
  it('says the shop’s disputes and payouts are not shown to a counter key, rather than counting none', async () => {
    const counter = viewers.find((v) => v.name === 'counter')!.key;
    const env = { POS_SERVER_URL: t.url, POS_API_KEY: counter };
    const words = await runCli(['report', 'day'], { env });
    expect(words.status, words.stderr).toBe(0);
    expect(words.stdout).toContain('Disputes: not shown to this key (it lacks disputes:read)');
    expect(words.stdout).toContain('Payouts: not shown to this key (it lacks payouts:read)');
    const owner = await runCli(['report', 'day'], { env: { ...env, POS_API_KEY: m.keys.sk_test } });
    expect(owner.stdout).toMatch(/Disputes: \d+ opened/);
  });
});

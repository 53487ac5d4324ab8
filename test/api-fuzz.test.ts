import { Agent, request } from 'node:http';
import fc from 'fast-check';
import pino from 'pino';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { ErrorBodySchema } from '../shared/contract/common.js';
import { UPSTREAM_PATH } from '../shared/agent-upstream.js';
import { client, type Json } from './helpers/api.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { eventually } from './helpers/tmp.js';

/**
 * Property-based fuzzing of every operation in the server's own `GET /v1/openapi.json`, over real
 * HTTP, in test mode: bodies near the schema and far from it (wrong types, huge and negative
 * numbers, deep nests, odd Unicode, arrays for objects, wrong content types, oversize and invalid
 * UTF-8 bytes), malformed and odd path ids, hostile query strings; plus the public pages, the
 * processor webhook and the agent websocket. Whatever is sent, the answer is never a 5xx, never
 * a reset connection, and the server answers `/healthz` at the end.
 *
 * Each run uses a fixed seed and one random seed, printed; `POS_FUZZ_SEED=<n>` replays a run.
 */

/**
 * Cases per operation per seed: about 65 operations × 2 seeds × 30 is some 4,000 requests, a few
 * seconds on a 2-core machine. Every run draws a new random seed, so runs add up to far more cases
 * than one holds; `POS_FUZZ_RUNS=500` runs a deep sitting on its own.
 */
const RUNS_PER_OPERATION = Number(process.env.POS_FUZZ_RUNS) || 30;
const FIXED_SEED = 20_261_121;
/** A hung request is a failure too; a real answer here takes milliseconds. */
const REQUEST_TIMEOUT_MS = 10_000;

const randomSeed = process.env.POS_FUZZ_SEED ? Number(process.env.POS_FUZZ_SEED) : Math.floor(Math.random() * 2 ** 31);
const SEEDS = process.env.POS_FUZZ_SEED ? [randomSeed] : [FIXED_SEED, randomSeed];

type Schema = {
  type?: string | string[];
  $ref?: string;
  allOf?: Schema[];
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  items?: Schema;
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
  example?: unknown;
};
type Parameter = { name: string; in: 'path' | 'query' | 'header'; schema: Schema };
type Operation = { method: string; path: string; parameters: Parameter[]; body?: Schema };
type OpenApi = { paths: Record<string, Record<string, { parameters?: Parameter[]; requestBody?: { content: Record<string, { schema: Schema }> } }>>; components: { schemas: Record<string, Schema> } };

interface Sent {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
}

let t: TestServer;
let key: string;
/**
 * The agent websocket's key, of a merchant of its own: the fuzz may roll or revoke any key of the
 * first merchant whose id it has learned, and a payment names the key that made it.
 */
let agentKey: string;
let doc: OpenApi;
/** Real ids and references of every kind, so fuzzed requests also reach existing objects. */
const real: Record<string, string[]> = {};
const logged: string[] = [];
/** How many answers of each status: a run that only ever reached the validators would show it here. */
const statuses = new Map<number, number>();
const agent = new Agent({ keepAlive: true, maxSockets: 4 });

beforeAll(async () => {
  console.log(`api fuzz: seeds ${SEEDS.join(', ')} (replay one with POS_FUZZ_SEED=<seed>)`);
  // Error-level log lines are collected: an unhandled error answered as 500 is also logged there.
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      logged.push(chunk.toString());
      done();
    },
  });
  // A bulk fixture: ~10,000 requests, thousands of them valid creates that reach the processor. At
  // Stripe's 25/s they alone would take minutes, and what is checked here is the answer to hostile
  // input, not the pacing (test/processor-budget.test.ts checks that), so the processor's limits
  // are off for this server only, as our own per-merchant limit is.
  t = await startTestServer({ rateLimit: 1_000_000 }, { logger: pino({ level: 'error' }, sink), simulator: { rateLimits: false } });
  key = (await t.merchant('Fuzz Shop')).keys.sk_test;
  agentKey = (await t.merchant('Fuzz Agent Shop')).keys.sk_test;
  const api = client(t.url, key);
  doc = (await api.get<OpenApi>('/v1/openapi.json')).body;

  const address = { line1: '1 Main St', city: 'Springfield', postal_code: '12345', country: 'US' };
  const location = await api.post<{ data: Json }>('/v1/terminal/locations', { display_name: 'Counter', address });
  const reader = await api.post<{ data: Json }>('/v1/terminals', { name: 'Till', registration_code: 'simulated-wpe' });
  const customer = await api.post<{ data: Json }>('/v1/customers', { name: 'Ada' });
  const paid = await api.post<{ data: Json }>('/v1/transactions', { amount: 1000, confirm: true, payment_method: 'pm_card_visa' });
  const manual = await api.post<{ data: Json }>('/v1/transactions', { amount: 1000, confirm: true, payment_method: 'pm_card_visa', capture_method: 'manual' });
  const session = await api.post<{ data: Json }>('/v1/checkout/sessions', { amount: 1000 });
  const link = await api.post<{ data: Json }>('/v1/payment-links', { amount: 1000 });
  const endpoint = await api.post<{ data: Json }>('/v1/webhook-endpoints', { url: 'https://shop.example.com/hooks', events: ['*'] });
  // A disputed payment's dispute (the simulator opens it a moment after the charge) and a payout.
  const disputed = await api.post<{ data: Json }>('/v1/transactions', { amount: 1000, confirm: true, payment_method: 'pm_card_createDispute' });
  await api.post('/v1/transactions', { amount: 5000, confirm: true, payment_method: 'pm_card_bypassPending' });
  const payout = await api.post<{ data: Json }>('/v1/payouts', { amount: 100 });
  const dispute = await eventually(async () => (await api.get<{ data: Json[] }>(`/v1/disputes?transaction_id=${String(disputed.body.data.id)}`)).body.data[0], 10_000);
  const events = await api.get<{ data: Json[] }>('/v1/events');
  const values = (...objects: (Json | undefined)[]) => objects.flatMap((o) => (o ? Object.values(o).filter((v): v is string => typeof v === 'string' && v.length > 0) : []));
  real.ids = values(location.body.data, reader.body.data, customer.body.data, paid.body.data, manual.body.data, session.body.data, link.body.data, endpoint.body.data, dispute, payout.body.data, ...events.body.data.slice(0, 3)).filter(
    (v) => v.length < 100 && !v.includes(' ') && !v.startsWith('http'),
  );
  real.readers = values(reader.body.data).filter((v) => v.startsWith('tmr_'));
  real.intents = values(paid.body.data, manual.body.data).filter((v) => v.startsWith('pi_'));
  real.refs = [String(session.body.data?.reference), String(link.body.data?.reference)];
  expect(real.ids.length).toBeGreaterThan(10);
}, 60_000);

afterAll(async () => {
  agent.destroy();
  await t?.stop();
});

// ---------------------------------------------------------------- arbitraries

/** Strings an attacker reaches for: lone surrogates, NUL and other controls, bidi overrides, emoji, BOMs, non-characters. */
const ODD_STRINGS = [
  '\ud800',
  '\udfff',
  'a\ud83d',
  '\u0000',
  'a\u0000b',
  '\u0001\u0002\u001b[31m',
  '\u007f',
  '\u0085',
  '\u202eevil\u202c',
  '\u200f\u200e',
  'مرحبا',
  'שלום',
  '🙂',
  '👩‍👩‍👧‍👦',
  '\ufeff',
  '\uffff',
  '\ufffd',
  'e\u0301\u0301\u0301',
  '\r\n',
  '\t',
  ' ',
  '',
  '../../etc/passwd',
  "'; drop table transactions; --",
  '<script>alert(1)</script>',
  '%00',
  '%ff',
  '${jndi:ldap://x}',
  '__proto__',
  'constructor',
  'toString',
];

/** Strings with unpaired surrogates cannot be percent-encoded; they travel in JSON bodies instead. */
const LONE_SURROGATE = /\p{Cs}/u;
const anyChar16 = fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c));
const oddString: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...ODD_STRINGS) },
  { weight: 2, arbitrary: fc.string({ unit: anyChar16, maxLength: 12 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }) },
  { weight: 1, arbitrary: fc.array(fc.constantFrom(...ODD_STRINGS), { maxLength: 4 }).map((parts) => parts.join('x')) },
  { weight: 1, arbitrary: fc.constantFrom(1_000, 10_000, 100_000).map((n) => 'x'.repeat(n)) },
);

const oddNumber: fc.Arbitrary<number> = fc.oneof(
  fc.constantFrom(0, -1, -50, 49, 50, 1e308, -1e308, 2 ** 53, 2 ** 53 + 2, -(2 ** 53), 99_999_999, 100_000_000, 0.5, 1e-9, 5e-324),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);

/** A value nested `depth` levels deep, as objects or arrays. */
const deepValue = fc.tuple(fc.integer({ min: 15, max: 60 }), fc.boolean()).map(([depth, arrays]) => {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = arrays ? [value] : { a: value };
  return value;
});

const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: oddString },
  { weight: 3, arbitrary: oddNumber },
  { weight: 1, arbitrary: fc.constantFrom(null, true, false, [], {}, [null], { '': '' }) },
  { weight: 1, arbitrary: deepValue },
  { weight: 1, arbitrary: fc.dictionary(oddString, oddString, { maxKeys: 4 }) },
  { weight: 1, arbitrary: fc.array(oddString, { maxLength: 4 }) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
);

function resolve(schema: Schema): Schema {
  if (schema.$ref) return resolve(doc.components.schemas[schema.$ref.split('/').pop() ?? ''] ?? {});
  if (schema.allOf?.length) return resolve(schema.allOf[0] ?? {});
  return schema;
}

function typeOf(schema: Schema): string | undefined {
  return Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
}

/** `arbitrary`'s value with probability `p` (in hundredths), undefined otherwise. */
function sometimes<T>(arbitrary: fc.Arbitrary<T>, p: number): fc.Arbitrary<T | undefined> {
  const present = Math.round(p * 100);
  return fc.oneof({ weight: present, arbitrary }, { weight: 100 - present, arbitrary: fc.constant(undefined) });
}

/** A value that fits `schema` or nearly does: ids of real objects, bounds and one past them. */
function plausible(schema: Schema, name: string): fc.Arbitrary<unknown> {
  const s = resolve(schema);
  if (s.enum) return fc.constantFrom(...s.enum);
  switch (typeOf(s)) {
    case 'integer':
    case 'number': {
      const min = s.minimum ?? 0;
      const max = s.maximum ?? 1_000_000;
      return fc.oneof(fc.integer({ min, max: Math.min(max, min + 100_000) }), fc.constantFrom(min, max, min - 1, max + 1));
    }
    case 'boolean':
      return fc.boolean();
    case 'array':
      return fc.array(s.items ? plausible(s.items, name) : hostileValue, { maxLength: 4 });
    case 'object':
      if (s.properties) return objectFor(s);
      return fc.dictionary(fc.string({ minLength: 1, maxLength: 41 }), fc.oneof(fc.string({ maxLength: 20 }), oddString), { maxKeys: 6 });
    case 'string': {
      const known: string[] = [];
      if (name.endsWith('reader_id')) known.push(...(real.readers ?? []));
      if (name.endsWith('payment_intent_id')) known.push(...(real.intents ?? []));
      if (name.endsWith('_id') || s.format === 'uuid') known.push(...(real.ids ?? []));
      if (name === 'payment_method') known.push('pm_card_visa', 'pm_card_chargeDeclined', 'pm_card_visa_chargeDeclinedInsufficientFunds');
      if (name === 'registration_code') known.push('simulated-wpe');
      if (name === 'currency') known.push('usd', 'eur', 'USD', 'xxx');
      if (name === 'country') known.push('US', 'de');
      if (s.format === 'email') known.push('a@example.com');
      if (s.format === 'uri') known.push('https://example.com/done', 'javascript:alert(1)', 'http://127.0.0.1:1/');
      if (typeof s.example === 'string') known.push(s.example);
      const text = fc.string({ minLength: s.minLength ?? 0, maxLength: Math.min(s.maxLength ?? 40, 40) });
      return known.length ? fc.oneof(fc.constantFrom(...known), text) : text;
    }
    default:
      return hostileValue;
  }
}

/** An object for `schema`: required fields mostly present, optional ones sometimes, each value plausible or hostile, now and then an unknown key. */
function objectFor(schema: Schema): fc.Arbitrary<Record<string, unknown>> {
  const s = resolve(schema);
  const entries = Object.entries(s.properties ?? {}).map(([name, prop]) => {
    const value = fc.oneof({ weight: 12, arbitrary: plausible(prop, name) }, { weight: 1, arbitrary: hostileValue });
    const required = s.required?.includes(name) ?? false;
    return sometimes(value.map((v) => [name, v] as const), required ? 0.95 : 0.5);
  });
  return fc
    .tuple(fc.tuple(...entries), sometimes(fc.tuple(oddString, hostileValue), 0.1))
    .map(([pairs, extra]) => {
      const object: Record<string, unknown> = {};
      for (const pair of pairs) if (pair) object[pair[0]] = pair[1];
      if (extra) object[extra[0]] = extra[1];
      return object;
    });
}

type Body = { contentType?: string; encoding?: string; body: Buffer };
const json = (value: unknown): Body => ({ contentType: 'application/json', body: Buffer.from(JSON.stringify(value) ?? 'null') });

/** Bodies far from any schema: wrong shapes, broken JSON, wrong types, oversize, invalid UTF-8 bytes. */
const hostileBody: fc.Arbitrary<Body> = fc.oneof(
  { weight: 8, arbitrary: hostileValue.map(json) },
  { weight: 3, arbitrary: fc.constantFrom('[', '{"a":', '{"a":1,}', "{'a':1}", 'NaN', '"\\ud800"', '{"a":"\\u0000"}', '{"__proto__":{"x":1}}', '{"amount":1e999}').map((s) => ({ contentType: 'application/json', body: Buffer.from(s) })) },
  { weight: 2, arbitrary: fc.integer({ min: 21, max: 20_000 }).map((n) => ({ contentType: 'application/json', body: Buffer.from('['.repeat(n) + ']'.repeat(n)) })) },
  { weight: 2, arbitrary: fc.constantFrom('{"description":"\xc0\xaf"}', '{"name":"\xed\xa0\x80"}', '{"name":"\xff\xfe"}', '\xef\xbb\xbf{}').map((s) => ({ contentType: 'application/json', body: Buffer.from(s, 'latin1') })) },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      { contentType: 'text/plain', body: Buffer.from('amount=1000') },
      { contentType: 'application/x-www-form-urlencoded', body: Buffer.from('amount=1000&metadata[a]=b') },
      { contentType: 'multipart/form-data; boundary=x', body: Buffer.from('--x\r\n\r\n--x--') },
      { contentType: 'application/json; charset=utf-16', body: Buffer.from('{}', 'utf16le') },
      { contentType: 'application/json; charset=latin1', body: Buffer.from('{}') },
      { contentType: 'application/json', encoding: 'gzip', body: Buffer.from('not gzip') },
      { contentType: 'application/json', encoding: 'br', body: Buffer.from('{}') },
      { contentType: 'application/json', encoding: 'zstd', body: Buffer.from('{}') },
      { contentType: 'application/json', body: Buffer.alloc(0) },
    ),
  },
  // Oversize bodies are costly to send: rare.
  { weight: 1, arbitrary: fc.constant({ contentType: 'application/json', body: Buffer.from(JSON.stringify({ description: 'x'.repeat(300 * 1024) })) }) },
);

const MALFORMED_ESCAPES = ['%', '%%', '%f', '%ff', '%C3%28', '%E0%A4%A', '%ED%A0%80', '%C0%AF', '%F4%90%80%80', '%zz', 'a%', '%00', '%2F', '%2e%2e', '..', '.'];

/** Path ids: real ones (of the right kind or not), malformed escapes, encoded odd strings, very long ones. */
const pathId: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: fc.constant(null).chain(() => fc.constantFrom(...(real.ids ?? ['x']))) },
  { weight: 3, arbitrary: fc.constantFrom(...MALFORMED_ESCAPES) },
  { weight: 2, arbitrary: oddString.filter((s) => s.length < 2_000 && !LONE_SURROGATE.test(s)).map((s) => encodeURIComponent(s) || 'x') },
  { weight: 1, arbitrary: fc.constantFrom('00000000-0000-4000-8000-000000000000', 'txn_doesnotexist', 'cus_', 'x'.repeat(4_000), '-1', '0', '1e9', 'null', 'undefined') },
  { weight: 1, arbitrary: fc.string({ unit: fc.constantFrom('a', '%', '0', 'f', 'E', 'D', 'A', '8', '_'), minLength: 1, maxLength: 12 }) },
);

const queryValue: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('1', '0', '-1', '100', '101', '1e3', '9999999999999', 'true', '', 'card', 'succeeded', 'payment.*'),
  fc.constantFrom(...MALFORMED_ESCAPES),
  oddString.filter((s) => s.length < 2_000 && !LONE_SURROGATE.test(s)).map((s) => encodeURIComponent(s)),
);

function queryFor(op: Operation): fc.Arbitrary<string> {
  const names = op.parameters.filter((p) => p.in === 'query').map((p) => p.name);
  const pair = fc.tuple(fc.oneof(fc.constantFrom(...(names.length ? names : ['page'])), fc.constantFrom('x', 'a[b][c]', 'page[]', 'size[0]', '__proto__[x]', 'a[__proto__]', '%ff', 'type[]')), queryValue);
  return sometimes(
    fc.array(pair, { maxLength: 5 }).map((pairs) => '?' + pairs.map(([k, v]) => `${k}=${v}`).join('&')),
    0.5,
  ).map((q) => q ?? '');
}

const authHeader = fc.oneof(
  { weight: 12, arbitrary: fc.constant('secret') },
  { weight: 1, arbitrary: fc.constantFrom('', 'Bearer', 'Bearer sk_test_x', 'Basic abc', 'Bearer pk_test_nope', 'Bearer  sk_test_' + 'a'.repeat(43), 'bearer \u00ff') },
);

const idempotencyKey = sometimes(fc.oneof(fc.constantFrom('k1', 'k2', 'x'.repeat(256), ' ', '\u00ff\u00fe'), fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 20 })), 0.2);

function requestFor(op: Operation): fc.Arbitrary<Sent> {
  const body: fc.Arbitrary<Body | undefined> = op.body
    ? fc.oneof({ weight: 3, arbitrary: objectFor(op.body).map(json) as fc.Arbitrary<Body> }, { weight: 1, arbitrary: hostileBody })
    : sometimes(hostileBody, 0.25);
  return fc.record({ id: pathId, query: queryFor(op), body, auth: authHeader, idem: idempotencyKey, method: sometimes(fc.constantFrom('PUT', 'PATCH', 'OPTIONS', 'HEAD'), 0.07) }).map(({ id, query, body, auth, idem, method }) => {
    const headers: Record<string, string> = {};
    if (auth === 'secret') headers.authorization = `Bearer ${key}`;
    else if (auth) headers.authorization = auth;
    if (idem !== undefined) headers['idempotency-key'] = idem;
    if (body?.contentType) headers['content-type'] = body.contentType;
    if (body?.encoding) headers['content-encoding'] = body.encoding;
    return { method: method ?? op.method.toUpperCase(), path: op.path.replace(/\{[^}]+\}/g, id) + query, headers, ...(body ? { body: body.body } : {}) };
  });
}

// ---------------------------------------------------------------- sending

interface Answer {
  status: number;
  contentType: string;
  text: string;
}

function send(sent: Sent): Promise<Answer> {
  const url = new URL(t.url);
  return new Promise((resolve, reject) => {
    // Node's client frames a GET, DELETE or OPTIONS body only when told its length; unframed, the
    // bytes would reach the server as a garbled next request.
    const headers = sent.body ? { ...sent.headers, 'content-length': String(sent.body.length) } : sent.headers;
    const req = request({ host: url.hostname, port: url.port, method: sent.method, path: sent.path, headers, agent, timeout: REQUEST_TIMEOUT_MS }, (res) => {
      const contentType = String(res.headers['content-type'] ?? '');
      // A stream (GET /v1/events/stream) is open and well: its head is the answer.
      if (contentType.startsWith('text/event-stream')) {
        res.destroy();
        resolve({ status: res.statusCode ?? 0, contentType, text: '' });
        return;
      }
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, contentType, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`no answer in ${REQUEST_TIMEOUT_MS} ms`)));
    req.on('error', (err) => reject(Object.assign(new Error(`${sent.method} ${sent.path}: ${err.message} (connection reset or refused)`), { code: (err as { code?: string }).code })));
    req.end(sent.body);
  });
}

function describeSent(sent: Sent): string {
  const body = sent.body ? sent.body.toString('utf8').slice(0, 300) : '';
  return `${sent.method} ${sent.path.slice(0, 300)} ${JSON.stringify(sent.headers)} ${body}`;
}

async function check(sent: Sent): Promise<void> {
  let answer: Answer;
  try {
    answer = await send(sent);
  } catch (err) {
    // A header or path Node's own client refuses to send is no request at all; anything else
    // (a reset, a hang) is the server's failure.
    if (/^ERR_(INVALID_CHAR|UNESCAPED_CHARACTERS|INVALID_HTTP_TOKEN)$/.test(String((err as { code?: unknown }).code))) return;
    throw err;
  }
  statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
  if (answer.status >= 500) throw new Error(`${answer.status} for ${describeSent(sent)}\n→ ${answer.text.slice(0, 500)}`);
  if (answer.status >= 400 && sent.method !== 'HEAD' && sent.path.startsWith('/v1') && answer.contentType.startsWith('application/json')) {
    const parsed: unknown = JSON.parse(answer.text);
    if (!ErrorBodySchema.safeParse(parsed).success) throw new Error(`not the spec's error body for ${describeSent(sent)}: ${answer.text.slice(0, 300)}`);
  }
}

function operations(): Operation[] {
  const ops: Operation[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const body = op.requestBody?.content['application/json']?.schema;
      ops.push({ method, path, parameters: op.parameters ?? [], ...(body ? { body } : {}) });
    }
  }
  return ops;
}

/** Surfaces outside /v1 that take client bytes: hosted pages, receipts, processor webhooks, unknown paths. */
const PUBLIC_OPERATIONS: Operation[] = [
  { method: 'get', path: '/checkout/{ref}', parameters: [] },
  { method: 'post', path: '/checkout/{ref}/start', parameters: [], body: { type: 'object', properties: { email: { type: 'string', format: 'email' }, name: { type: 'string' }, phone: { type: 'string' }, address: { type: 'object', properties: { line1: { type: 'string' }, city: { type: 'string' }, postal_code: { type: 'string' }, country: { type: 'string' } } }, transaction: { type: 'string' } } } },
  { method: 'get', path: '/pay/{ref}', parameters: [] },
  { method: 'post', path: '/pay/{ref}/start', parameters: [], body: { type: 'object', properties: { email: { type: 'string', format: 'email' }, name: { type: 'string' }, transaction: { type: 'string' } } } },
  { method: 'get', path: '/receipts/{token}', parameters: [] },
  { method: 'post', path: '/processor/webhooks', parameters: [], body: { type: 'object', properties: { id: { type: 'string' }, type: { type: 'string' }, data: { type: 'object' } } } },
  { method: 'get', path: '/{anything}', parameters: [] },
  { method: 'get', path: '/v1/{anything}', parameters: [] },
  { method: 'get', path: '/healthz', parameters: [] },
];

describe('API fuzz (test mode)', () => {
  it('answers every fuzzed request to every operation with something other than a 5xx', async () => {
    const ops = [...operations(), ...PUBLIC_OPERATIONS];
    expect(ops.length).toBeGreaterThan(40);
    let sentCount = 0;
    for (const seed of SEEDS) {
      for (const [index, op] of ops.entries()) {
        const extra = op.path.startsWith('/checkout') || op.path.startsWith('/pay')
          ? fc.constantFrom(...(real.refs ?? []), 'cs_x', 'pl_x')
          : fc.constant(undefined);
        const property = fc.assert(
          fc.asyncProperty(requestFor(op), extra, fc.option(fc.constantFrom('t=1,v1=abc', 't=x', ''), { nil: undefined }), async (sent, ref, signature) => {
            sentCount += 1;
            const withRef = ref && !sent.path.includes('%') ? { ...sent, path: sent.path.replace(/^\/(checkout|pay)\/[^/?]*/, `/$1/${ref}`) } : sent;
            if (signature !== undefined && op.path === '/processor/webhooks') withRef.headers['stripe-signature'] = signature;
            await check(withRef);
          }),
          { seed: seed + index, numRuns: RUNS_PER_OPERATION, endOnFailure: true },
        );
        await property.catch((err: unknown) => {
          throw new Error(`${op.method.toUpperCase()} ${op.path} failed; replay with POS_FUZZ_SEED=${seed}`, { cause: err });
        });
      }
    }
    console.log(`api fuzz: ${sentCount} requests to ${ops.length} operations; answers by status: ${JSON.stringify(Object.fromEntries([...statuses].sort(([a], [b]) => a - b)))}`);
    expect(logged.filter((line) => line.includes('unhandled error'))).toEqual([]);
    expect((await client(t.url).get('/healthz')).status).toBe(200);
  }, 120_000);

  it('survives fuzzed agent websocket frames and keeps the connection and the server up', async () => {
    const ws = new WebSocket(t.url.replace('http', 'ws') + UPSTREAM_PATH, { headers: { authorization: `Bearer ${agentKey}` } });
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    let replies = 0;
    ws.on('message', () => (replies += 1));
    const message = fc.record({
      type: fc.oneof(fc.constantFrom('hello', 'heartbeat', 'reports', 'goodbye-not', 'x'), oddString),
      protocol: fc.oneof(fc.constant(1), hostileValue),
      agent_id: fc.oneof(fc.uuid(), oddString),
      name: fc.oneof(fc.constant('agent'), oddString),
      version: fc.oneof(fc.constant('1'), oddString),
      heartbeat_ms: fc.oneof(fc.constant(1_000), oddNumber),
      cursor: fc.oneof(fc.constant(null), oddNumber),
      readers: fc.oneof(fc.array(fc.record({ reader: hostileValue, status: fc.constantFrom('online', 'offline') }), { maxLength: 3 }), hostileValue),
      reports: hostileValue,
    }, { requiredKeys: ['type'] });
    const frame = fc.oneof(
      { weight: 4, arbitrary: message.map((m) => JSON.stringify(m)) },
      { weight: 2, arbitrary: hostileBody.map((b) => b.body.toString('latin1')) },
      { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }).map((bytes) => Buffer.from(bytes)) },
    );
    // The connection is closed after too many invalid messages: each batch gets a fresh one.
    const frames = fc.sample(frame, { seed: SEEDS[SEEDS.length - 1] ?? FIXED_SEED, numRuns: 20 });
    for (const f of frames) if (f !== '') ws.send(f, { binary: Buffer.isBuffer(f) });
    await expect.poll(() => replies, { timeout: 10_000 }).toBeGreaterThanOrEqual(frames.filter((f) => f !== '').length);
    ws.close();
    expect((await client(t.url).get('/healthz')).status).toBe(200);
    expect((await client(t.url, agentKey).get('/v1/merchant')).status).toBe(200);
  });
});

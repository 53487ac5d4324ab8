import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { apiRoutes } from '../../server/app.js';
import { openApiDocument, routeMatcher } from '../../server/http/route-table.js';

/**
 * Every answer of a /v1 operation the tests receive is checked against the /v1 OpenAPI document:
 * the status must be one the request's operation declares, and the body must match that status's
 * schema; every webhook delivery a test receiver gets must match its event type's schema. So the
 * document says what the server answers, or the suite fails. test/helpers/api.ts checks its own
 * answers (and throws at once); `checkFetchAnswers` (installed for every test file by
 * test/setup/contract.ts) checks any other `fetch`. POS_CONTRACT_CHECK=0 turns it off (to see a
 * test's own failure first).
 */

const ENABLED = process.env.POS_CONTRACT_CHECK !== '0';

interface Contract {
  match: ReturnType<typeof routeMatcher>;
  ajv: Ajv2020;
  document: ReturnType<typeof openApiDocument>;
  validators: Map<string, ValidateFunction>;
}

let contract: Contract | undefined;

/** The document and its validators, made once per worker; a validator is compiled the first time its answer is seen. */
function load(): Contract {
  if (contract) return contract;
  const document = openApiDocument(apiRoutes);
  const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: true });
  addFormats.default(ajv);
  ajv.addSchema({ $id: 'pos', components: document.components }, 'pos');
  contract = { match: routeMatcher(apiRoutes), ajv, document, validators: new Map() };
  return contract;
}

/** Rewrites the document's local references to point into the schema added as `pos`. */
function anchored(schema: unknown): unknown {
  return JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"pos#/components/')) as unknown;
}

export class ContractViolation extends Error {
  override readonly name = 'ContractViolation';
}

/**
 * Violations seen since the last `takeViolations`: thrown where they are seen, and kept here too,
 * so a test whose code swallowed the throw (a polling loop, a `.catch`) still fails in `afterEach`
 * (test/setup/contract.ts).
 */
const seen: ContractViolation[] = [];

function violation(message: string): ContractViolation {
  const v = new ContractViolation(message);
  seen.push(v);
  return v;
}

export function takeViolations(): ContractViolation[] {
  return seen.splice(0);
}

/** How many answers and webhook deliveries were checked in this worker (the setup file reports it). */
export const checked = { answers: 0, webhooks: 0 };

const MOUNT = /^\/v1\//i;

/** Throws a ContractViolation when the answer to `method path` is not what the document declares. */
export function checkAnswer(method: string, url: string, status: number, contentType: string | null, body: unknown): void {
  if (!ENABLED || method === 'HEAD' || method === 'OPTIONS') return;
  const path = url.split('?')[0] ?? url;
  if (!MOUNT.test(path)) return;
  const c = load();
  const found = c.match(method.toUpperCase(), path);
  // No operation: the 404 of an unknown route, or a 401/429 answered before any route, which every path can get.
  if (!found) return;
  const r = found.route;
  const operation = c.document.paths?.[r.path]?.[r.method];
  const response = operation?.responses?.[String(status)] as { content?: Record<string, { schema?: unknown }> } | undefined;
  if (!response) throw violation(`${r.operationId} (${method} ${path}) answered ${status}, which the document does not declare: ${JSON.stringify(body)?.slice(0, 400)}`);
  const schema = response.content?.['application/json']?.schema;
  if (schema === undefined) return;
  // A websocket endpoint's 101 and an event stream are not JSON answers.
  if (!contentType?.includes('application/json')) {
    throw violation(`${r.operationId} (${method} ${path}) answered ${status} as ${contentType ?? 'no content type'}, the document says JSON`);
  }
  checked.answers += 1;
  const validate = validator(c, `${r.operationId} ${status}`, schema);
  if (!validate(body)) {
    throw violation(`${r.operationId} (${method} ${path}) answered ${status} with a body the document does not allow: ${problems(validate)}: ${JSON.stringify(body)?.slice(0, 600)}`);
  }
}

function validator(c: Contract, key: string, schema: unknown): ValidateFunction {
  let validate = c.validators.get(key);
  if (validate === undefined) {
    validate = c.ajv.compile(anchored(schema) as object);
    c.validators.set(key, validate);
  }
  return validate;
}

function problems(validate: ValidateFunction): string {
  return (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)}`).join('; ');
}

/**
 * Throws a ContractViolation when a webhook delivery's body is not an event type of the document's
 * `webhooks` with the payload schema of its type.
 */
export function checkWebhook(body: string): void {
  if (!ENABLED) return;
  const c = load();
  let event: unknown;
  try {
    event = JSON.parse(body);
  } catch {
    throw violation(`a webhook delivery is not JSON: ${body.slice(0, 200)}`);
  }
  const type = typeof event === 'object' && event !== null && 'type' in event ? String(event.type) : undefined;
  const webhook = type === undefined ? undefined : c.document.webhooks?.[type]?.post;
  const schema = (webhook?.requestBody as { content?: Record<string, { schema?: unknown }> } | undefined)?.content?.['application/json']?.schema;
  if (schema === undefined) throw violation(`a webhook delivery of type ${type ?? '(none)'}, which the document's webhooks do not list: ${body.slice(0, 300)}`);
  checked.webhooks += 1;
  const validate = validator(c, `webhook ${type ?? ''}`, schema);
  if (!validate(event)) throw violation(`the ${type ?? ''} webhook delivered a body the document does not allow: ${problems(validate)}: ${body.slice(0, 600)}`);
}

/** The `fetch` before `checkFetchAnswers` wrapped it: helpers/api.ts uses it and checks its answers itself. */
export const uncheckedFetch: typeof fetch = globalThis.fetch;

function requestLine(input: Parameters<typeof fetch>[0], init: Parameters<typeof fetch>[1]): { method: string; url: string } {
  if (input instanceof Request) return { method: (init?.method ?? input.method).toUpperCase(), url: input.url };
  return { method: (init?.method ?? 'GET').toUpperCase(), url: input instanceof URL ? input.href : input };
}

/**
 * Checks an answer `fetch` got, recording a violation rather than throwing it: the caller may be the
 * code under test (the CLI's or the agent's client), which must see the answer as it came. An answer
 * carrying `Stripe-Version` is Stripe's API (the simulator, whose paths overlap ours:
 * `/v1/customers`), not ours, and is left alone; so is one without the `Request-Id` every pos
 * answer carries (server/http/middleware.ts): a test's stand-in server or proxy, whose odd answers
 * are the point of the test.
 */
async function checkFetched(res: Response, method: string, url: string): Promise<void> {
  const path = new URL(url, 'http://localhost').pathname;
  if (!ENABLED || !MOUNT.test(path) || res.headers.has('stripe-version') || !res.headers.has('request-id')) return;
  const type = res.headers.get('content-type');
  try {
    // An event stream never ends: its status is checked, its body is the caller's to read.
    if (type?.includes('text/event-stream') || method === 'HEAD') {
      checkAnswer(method, path, res.status, type, undefined);
      return;
    }
    const text = await res.clone().text();
    let body: unknown = text || undefined;
    if (type?.includes('application/json') && text) body = JSON.parse(text) as unknown;
    checkAnswer(method, path, res.status, type, body);
  } catch (err) {
    if (!(err instanceof ContractViolation)) violation(`${method} ${path} answered ${res.status} with a body that could not be read as declared: ${String(err)}`);
  }
}

const WRAPPED = Symbol.for('pos.contract.fetch');

/** Wraps the global `fetch` (once per worker) so every answer of a /v1 operation is checked. */
export function checkFetchAnswers(): void {
  const current = globalThis.fetch as typeof fetch & { [WRAPPED]?: true };
  if (current[WRAPPED]) return;
  const wrapped = async (input: Parameters<typeof fetch>[0], init?: Parameters<typeof fetch>[1]): Promise<Response> => {
    const res = await current(input, init);
    const { method, url } = requestLine(input, init);
    await checkFetched(res, method, url);
    return res;
  };
  globalThis.fetch = Object.assign(wrapped, { [WRAPPED]: true as const });
}

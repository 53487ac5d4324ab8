import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { apiRoutes } from '../../server/app.js';
import { openApiDocument, routeMatcher } from '../../server/http/route-table.js';

/**
 * Every answer the API tests receive is checked against the /v1 OpenAPI document (test/helpers/api.ts
 * calls this): the status must be one the request's operation declares, and the body must match
 * that status's schema. So the document says what the server answers, or the suite fails.
 * POS_CONTRACT_CHECK=0 turns it off (to see a test's own failure first).
 */

const ENABLED = process.env.POS_CONTRACT_CHECK !== '0';

interface Contract {
  match: ReturnType<typeof routeMatcher>;
  ajv: Ajv2020;
  document: ReturnType<typeof openApiDocument>;
  validators: Map<string, ValidateFunction | null>;
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
  if (!response) throw new ContractViolation(`${r.operationId} (${method} ${path}) answered ${status}, which the document does not declare: ${JSON.stringify(body)?.slice(0, 400)}`);
  const schema = response.content?.['application/json']?.schema;
  if (schema === undefined) return;
  // A websocket endpoint's 101 and an event stream are not JSON answers.
  if (!contentType?.includes('application/json')) {
    throw new ContractViolation(`${r.operationId} (${method} ${path}) answered ${status} as ${contentType ?? 'no content type'}, the document says JSON`);
  }
  const key = `${r.operationId} ${status}`;
  let validate = c.validators.get(key);
  if (validate === undefined) {
    validate = c.ajv.compile(anchored(schema) as object);
    c.validators.set(key, validate);
  }
  if (validate && !validate(body)) {
    const problems = (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)}`).join('; ');
    throw new ContractViolation(`${r.operationId} (${method} ${path}) answered ${status} with a body the document does not allow: ${problems}: ${JSON.stringify(body)?.slice(0, 600)}`);
  }
}

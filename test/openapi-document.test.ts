import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import createClient from 'openapi-fetch';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import type { CreatedMerchant } from '../server/accounts/merchants.js';
import { apiRoutes } from '../server/app.js';
import { openApiDocument } from '../server/http/route-table.js';
import { EVENT_TYPES } from '../shared/contract/event-types.js';
import type { paths } from './generated/pos-api.js';
import { client } from './helpers/api.js';
import { startTestServer, type TestServer } from './helpers/server.js';

const document = openApiDocument(apiRoutes);

describe('the /v1 OpenAPI document', () => {
  it('passes Redocly lint with no operation-operationId, operation-2xx-response, struct, unresolved-ref or security problem', async () => {
    // Redocly's own linter, in process, with its recommended rules (what `redocly lint` runs by default).
    const config = await createConfig({ extends: ['recommended'] });
    const problems = await lintFromString({ source: JSON.stringify(document), absoluteRef: join(process.cwd(), 'openapi.json'), config });
    const ours = problems.filter((p) => ['operation-operationId', 'operation-2xx-response', 'struct', 'no-unresolved-refs'].includes(p.ruleId));
    expect(ours.map((p) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer ?? ''}`)).toEqual([]);
    // Nor any other rule of the recommended set but the license the document cannot name: the project has none (package.json: UNLICENSED).
    expect(problems.filter((p) => p.ruleId !== 'info-license').map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer ?? ''}`)).toEqual([]);
    // The agents' websocket succeeds with its 101, and a plain GET with its 200: the protocol it speaks.
    const connect = document.paths?.['/v1/agent/connect']?.get?.responses;
    expect(connect?.['101']).toMatchObject({ description: expect.stringContaining('Switching Protocols') });
    expect(connect?.['200']).toMatchObject({ content: { 'application/json': expect.anything() } });
  });

  it("shows each request body as it is accepted: a property with a default is optional, the others required", () => {
    const schemas = (document.components?.schemas ?? {}) as Record<string, { required?: string[]; properties?: Record<string, unknown> }>;
    const checked: string[] = [];
    for (const r of apiRoutes) {
      if (!r.body || !('shape' in r.body)) continue;
      const shape = (r.body as z.ZodObject).shape;
      const media = (document.paths?.[r.path]?.[r.method]?.requestBody as { content: Record<string, { schema: { $ref?: string; required?: string[] } }> }).content['application/json']?.schema;
      const shown = media?.$ref ? schemas[media.$ref.split('/').pop() ?? ''] : media;
      const required = Object.keys(shape).filter((name) => !shape[name]?.safeParse(undefined).success);
      expect([...(shown?.required ?? [])].sort(), r.operationId).toEqual(required.sort());
      checked.push(r.operationId);
    }
    expect(checked).toContain('createTransaction');
    const create = schemas.CreateTransaction;
    expect(create?.required).toEqual(['amount']);
    expect(create?.properties).toHaveProperty('capture_method');
  });

  it('lists every event type as a webhook with its payload schema', () => {
    expect(Object.keys(document.webhooks ?? {}).sort()).toEqual([...EVENT_TYPES].sort());
    const body = document.webhooks?.['payment.succeeded']?.post?.requestBody as { content: Record<string, { schema: { properties: Record<string, unknown> } }> };
    expect(body.content['application/json']?.schema.properties).toMatchObject({ type: { type: 'string', enum: ['payment.succeeded'] }, data: expect.anything() });
    expect(document.webhooks?.['payment.succeeded']?.post?.operationId).toBe('paymentSucceededEvent');
  });

  it("declares each operation's refusal codes, and a bodiless POST takes no body or {}", () => {
    const responses = document.paths?.['/v1/transactions/{id}/refunds']?.post?.responses as Record<string, { content: Record<string, { schema: { allOf: { properties?: { error: { properties: { code: { enum: string[] } } } } }[] } }> }>;
    const codes = (status: string) => responses[status]?.content['application/json']?.schema.allOf[1]?.properties?.error.properties.code.enum;
    expect([...(codes('409') ?? [])].sort()).toEqual(['already_refunded', 'idempotency_key_in_use', 'transaction_disputed', 'transaction_not_refundable']);
    expect(codes('404')).toEqual(['resource_missing']);
    const revoke = document.paths?.['/v1/api-keys/{id}/revoke']?.post?.requestBody as { required: boolean; content: Record<string, { schema: unknown }> };
    expect(revoke.required).toBe(false);
    expect(revoke.content['application/json']?.schema).toEqual({ type: 'object', additionalProperties: false, maxProperties: 0 });
  });
});

describe('a client generated from the document (openapi-typescript + openapi-fetch)', () => {
  let t: TestServer;
  let m: CreatedMerchant;
  beforeAll(async () => {
    t = await startTestServer();
    m = await t.merchant('Generated Client Shop');
  });
  afterAll(() => t.stop());

  it('is the one `npm run build` generated from this document', async () => {
    const generated = readFileSync(new URL('./generated/pos-api.d.ts', import.meta.url), 'utf8');
    // The options scripts/openapi-client.mjs generates with: a property with a default may be left out of a request.
    const fresh = astToString(await openapiTS(JSON.parse(JSON.stringify(document)) as never, { defaultNonNullable: false }));
    if (process.env.POS_DUMP_CLIENT) writeFileSync(process.env.POS_DUMP_CLIENT, fresh);
    expect(generated === fresh, 'test/generated/pos-api.d.ts is stale: run npm run build').toBe(true);
  }, 60_000);

  it('takes a payment, refunds it and registers a webhook endpoint', async () => {
    const pos = createClient<paths>({ baseUrl: t.url, headers: { Authorization: `Bearer ${m.keys.sk_test}` } });
    const paid = await pos.POST('/v1/transactions', { body: { amount: 1200, currency: 'usd', payment_method: 'pm_card_visa', confirm: true }, params: { header: { 'Idempotency-Key': 'generated-1' } } });
    expect(paid.response.status, JSON.stringify(paid.error)).toBe(201);
    const payment = paid.data?.data;
    expect(payment?.status).toBe('succeeded');
    const refund = await pos.POST('/v1/transactions/{id}/refunds', { params: { path: { id: payment?.id ?? '' } }, body: { amount: 200 } });
    expect(refund.response.status, JSON.stringify(refund.error)).toBe(201);
    expect(refund.data?.data.amount).toBe(200);
    const endpoint = await pos.POST('/v1/webhook-endpoints', { body: { url: 'https://shop.example.com/hooks', events: ['payment.*', 'refund.succeeded'] } });
    expect(endpoint.response.status, JSON.stringify(endpoint.error)).toBe(201);
    expect(endpoint.data?.data.events).toEqual(['payment.*', 'refund.succeeded']);
    const refused = await pos.POST('/v1/webhook-endpoints', { body: { url: 'https://shop.example.com/hooks', events: ['no.such.event'] } });
    expect(refused.response.status).toBe(400);
    expect(refused.error?.error.message).toContain('no.such.event');
    // The same refusal through the tests' own client, whose answers are checked against the document.
    const update = await client(t.url, m.keys.sk_test).post(`/v1/webhook-endpoints/${endpoint.data?.data.id ?? ''}`, { events: ['payment.*', 'payment.sucseeded'] });
    expect(update.status).toBe(400);
    expect(update.body).toMatchObject({ error: { code: 'parameter_invalid', param: 'events[1]' } });
    expect(JSON.stringify(update.body)).toContain('payment.sucseeded');
  }, 60_000);
});

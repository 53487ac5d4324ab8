import { scopeOf } from '../http/middleware.js';
import { idempotencyKeyOf, sendIdempotent } from '../http/idempotency.js';
import { route } from '../http/route-table.js';
import { dataEnvelope, UuidParam } from '../../shared/contract/common.js';
import {
  CancelActionResultSchema,
  CancelActionSchema,
  CreateLocationSchema,
  CreateTerminalPaymentSchema,
  DeviceSchema,
  LocationSchema,
  ProcessPaymentSchema,
  ReaderActionSchema,
  ReaderSchema,
  RegisterReaderSchema,
  SimulatePaymentSchema,
  SimulateResultSchema,
  TerminalPaymentSchema,
  UpdateLocationSchema,
} from '../../shared/contract/terminal.js';
import { z } from '../../shared/contract/zod.js';

const IdParams = z.object({ id: UuidParam });

export const terminalRoutes = [
  route({
    operationId: 'listReaders',
    method: 'get',
    path: '/v1/terminal/readers',
    scope: 'terminal:read',
    summary: "The key's mode's readers with presence",
    responses: { 200: dataEnvelope(z.array(ReaderSchema)) },
    errors: [502, 503],
    async handle({ terminal }, { req, res }) {
      res.json({ data: await terminal.listReaders(scopeOf(req)) });
    },
  }),
  route({
    operationId: 'listDevices',
    method: 'get',
    path: '/v1/terminal/devices',
    scope: 'terminal:read',
    summary: "The key's mode's receipt printers and customer displays, as their agents report them",
    responses: { 200: dataEnvelope(z.array(DeviceSchema)) },
    async handle({ devices }, { req, res }) {
      res.json({ data: await devices.list(scopeOf(req)) });
    },
  }),
  route({
    operationId: 'deleteReader',
    method: 'delete',
    path: '/v1/terminal/readers/{id}',
    scope: 'terminal:write',
    summary: 'Delete a reader (uuid or tmr_ id)',
    params: IdParams,
    responses: { 200: dataEnvelope(ReaderSchema) },
    errors: [502, 503],
    async handle({ terminal }, { req, res, params }) {
      res.json({ data: await terminal.deleteReader(scopeOf(req), params.id) });
    },
  }),
  route({
    operationId: 'createLocation',
    method: 'post',
    path: '/v1/terminal/locations',
    scope: 'terminal:write',
    summary: 'Create a location readers attach to',
    body: CreateLocationSchema,
    responses: { 201: dataEnvelope(LocationSchema) },
    errors: [502, 503],
    async handle({ terminal }, { req, res, body }) {
      res.status(201).json({ data: await terminal.createLocation(scopeOf(req), body) });
    },
  }),
  route({
    operationId: 'listLocations',
    method: 'get',
    path: '/v1/terminal/locations',
    scope: 'terminal:read',
    summary: "The key's mode's locations",
    responses: { 200: dataEnvelope(z.array(LocationSchema)) },
    async handle({ terminal }, { req, res }) {
      res.json({ data: await terminal.listLocations(scopeOf(req)) });
    },
  }),
  route({
    operationId: 'updateLocation',
    method: 'post',
    path: '/v1/terminal/locations/{id}',
    scope: 'terminal:write',
    summary: "Change a location's on-reader tipping (or turn it off) and its receipt policy",
    params: IdParams,
    body: UpdateLocationSchema,
    responses: { 200: dataEnvelope(LocationSchema) },
    errors: [502, 503],
    async handle({ terminal }, { req, res, params, body }) {
      res.json({ data: await terminal.updateLocation(scopeOf(req), params.id, body) });
    },
  }),
  route({
    operationId: 'registerReader',
    method: 'post',
    path: '/v1/terminals',
    scope: 'terminal:write',
    summary: 'Register a reader (simulated-wpe in test mode)',
    body: RegisterReaderSchema,
    responses: { 201: dataEnvelope(ReaderSchema) },
    errors: [502, 503],
    async handle({ terminal }, { req, res, body }) {
      res.status(201).json({ data: await terminal.registerReader(scopeOf(req), body) });
    },
  }),
  route({
    operationId: 'deleteTerminal',
    method: 'delete',
    path: '/v1/terminals/{id}',
    scope: 'terminal:write',
    summary: 'Delete a reader (alias)',
    params: IdParams,
    responses: { 200: dataEnvelope(ReaderSchema) },
    errors: [502, 503],
    async handle({ terminal }, { req, res, params }) {
      res.json({ data: await terminal.deleteReader(scopeOf(req), params.id) });
    },
  }),
  route({
    operationId: 'createTerminalPayment',
    method: 'post',
    path: '/v1/terminal/create-payment',
    scope: 'terminal:write',
    summary: 'Create an in-person payment',
    body: CreateTerminalPaymentSchema,
    responses: { 201: dataEnvelope(TerminalPaymentSchema), 200: dataEnvelope(TerminalPaymentSchema) },
    errors: [402, 502, 503],
    conflicts: ['reader_busy', 'reader_offline'],
    idempotent: true,
    async handle({ terminal }, { req, res, body }) {
      const { idempotency_key: bodyKey, ...input } = body;
      const clientKey = idempotencyKeyOf(req, bodyKey);
      sendIdempotent(res, await terminal.createPayment(scopeOf(req), input, clientKey), clientKey);
    },
  }),
  route({
    operationId: 'processTerminalPayment',
    method: 'post',
    path: '/v1/terminal/process-payment',
    scope: 'terminal:write',
    summary: 'Send a payment to a reader',
    body: ProcessPaymentSchema,
    responses: { 200: dataEnvelope(ReaderActionSchema) },
    errors: [502, 503],
    conflicts: ['transaction_not_processable', 'reader_busy', 'reader_offline'],
    async handle({ terminal }, { req, res, body }) {
      res.json({ data: await terminal.processPayment(scopeOf(req), body.payment_intent_id, body.reader_id) });
    },
  }),
  route({
    operationId: 'simulateTerminalPayment',
    method: 'post',
    path: '/v1/terminal/simulate-payment',
    scope: 'terminal:write',
    summary: 'Test mode: tap a test card on a reader',
    body: SimulatePaymentSchema,
    responses: { 200: dataEnvelope(SimulateResultSchema) },
    errors: [502, 503],
    conflicts: ['reader_idle', 'reader_offline'],
    async handle({ terminal }, { req, res, body }) {
      res.json({
        data: await terminal.simulatePayment(scopeOf(req), body.reader_id, {
          ...(body.amount_tip !== undefined ? { amountTip: body.amount_tip } : {}),
          ...(body.card_number ? { cardNumber: body.card_number } : {}),
        }),
      });
    },
  }),
  route({
    operationId: 'cancelReaderAction',
    method: 'post',
    path: '/v1/terminal/cancel-action',
    scope: 'terminal:write',
    summary: "Clear the reader's screen (the payment stays pending)",
    body: CancelActionSchema,
    responses: { 200: dataEnvelope(CancelActionResultSchema) },
    errors: [502, 503],
    conflicts: ['authorization_in_progress', 'reader_offline'],
    async handle({ terminal }, { req, res, body }) {
      res.json({ data: await terminal.cancelAction(scopeOf(req), body.reader_id) });
    },
  }),
];

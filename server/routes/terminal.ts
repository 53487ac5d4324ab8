import { Router } from 'express';
import { scopeOf } from '../http/middleware.js';
import { idempotencyKeyOf, sendIdempotent } from '../http/idempotency.js';
import { parseInput } from '../http/validate.js';
import type { RouteDoc } from '../openapi.js';
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
import type { DeviceService } from '../terminal/devices.js';
import type { TerminalService } from '../terminal/readers.js';

const IdParams = z.object({ id: UuidParam });

export const terminalDocs: RouteDoc[] = [
  { method: 'get', path: '/v1/terminal/readers', scope: 'terminal:read', summary: "The key's mode's readers with presence", response: dataEnvelope(z.array(ReaderSchema)) },
  {
    method: 'get',
    path: '/v1/terminal/devices',
    scope: 'terminal:read',
    summary: "The key's mode's receipt printers and customer displays, as their agents report them",
    response: dataEnvelope(z.array(DeviceSchema)),
  },
  { method: 'delete', path: '/v1/terminal/readers/{id}', scope: 'terminal:write', summary: 'Delete a reader (uuid or tmr_ id)', params: IdParams, response: dataEnvelope(ReaderSchema) },
  { method: 'post', path: '/v1/terminal/locations', scope: 'terminal:write', summary: 'Create a location readers attach to', body: CreateLocationSchema, status: 201, response: dataEnvelope(LocationSchema) },
  { method: 'get', path: '/v1/terminal/locations', scope: 'terminal:read', summary: "The key's mode's locations", response: dataEnvelope(z.array(LocationSchema)) },
  { method: 'post', path: '/v1/terminal/locations/{id}', scope: 'terminal:write', summary: "Change a location's on-reader tipping (or turn it off) and its receipt policy", params: IdParams, body: UpdateLocationSchema, response: dataEnvelope(LocationSchema) },
  { method: 'post', path: '/v1/terminals', scope: 'terminal:write', summary: 'Register a reader (simulated-wpe in test mode)', body: RegisterReaderSchema, status: 201, response: dataEnvelope(ReaderSchema) },
  { method: 'delete', path: '/v1/terminals/{id}', scope: 'terminal:write', summary: 'Delete a reader (alias)', params: IdParams, response: dataEnvelope(ReaderSchema) },
  { method: 'post', path: '/v1/terminal/create-payment', scope: 'terminal:write', summary: 'Create an in-person payment', body: CreateTerminalPaymentSchema, status: 201, response: dataEnvelope(TerminalPaymentSchema), idempotent: true },
  { method: 'post', path: '/v1/terminal/process-payment', scope: 'terminal:write', summary: 'Send a payment to a reader', body: ProcessPaymentSchema, response: dataEnvelope(ReaderActionSchema) },
  { method: 'post', path: '/v1/terminal/simulate-payment', scope: 'terminal:write', summary: 'Test mode: tap a test card on a reader', body: SimulatePaymentSchema, response: dataEnvelope(SimulateResultSchema) },
  { method: 'post', path: '/v1/terminal/cancel-action', scope: 'terminal:write', summary: "Clear the reader's screen (the payment stays pending)", body: CancelActionSchema, response: dataEnvelope(CancelActionResultSchema) },
];

export function terminalRouters(terminal: TerminalService, devices: DeviceService): { terminal: Router; terminals: Router } {
  const router = Router();
  router.get('/readers', async (req, res) => {
    res.json({ data: await terminal.listReaders(scopeOf(req)) });
  });
  router.get('/devices', async (req, res) => {
    res.json({ data: await devices.list(scopeOf(req)) });
  });
  const deleteReader = async (req: Parameters<Parameters<Router['delete']>[1]>[0], res: Parameters<Parameters<Router['delete']>[1]>[1]) => {
    res.json({ data: await terminal.deleteReader(scopeOf(req), String(req.params.id)) });
  };
  router.delete('/readers/:id', deleteReader);
  router.post('/locations', async (req, res) => {
    const input = parseInput(CreateLocationSchema, req.body ?? {});
    res.status(201).json({ data: await terminal.createLocation(scopeOf(req), input) });
  });
  router.post('/locations/:id', async (req, res) => {
    const { id } = parseInput(IdParams, req.params);
    const input = parseInput(UpdateLocationSchema, req.body ?? {});
    res.json({ data: await terminal.updateLocation(scopeOf(req), id, input) });
  });
  router.get('/locations', async (req, res) => {
    res.json({ data: await terminal.listLocations(scopeOf(req)) });
  });
  router.post('/create-payment', async (req, res) => {
    const { idempotency_key: bodyKey, ...input } = parseInput(CreateTerminalPaymentSchema, req.body ?? {});
    const clientKey = idempotencyKeyOf(req, bodyKey);
    sendIdempotent(res, await terminal.createPayment(scopeOf(req), input, clientKey), clientKey);
  });
  router.post('/process-payment', async (req, res) => {
    const input = parseInput(ProcessPaymentSchema, req.body ?? {});
    res.json({ data: await terminal.processPayment(scopeOf(req), input.payment_intent_id, input.reader_id) });
  });
  router.post('/simulate-payment', async (req, res) => {
    const input = parseInput(SimulatePaymentSchema, req.body ?? {});
    res.json({
      data: await terminal.simulatePayment(scopeOf(req), input.reader_id, {
        ...(input.amount_tip !== undefined ? { amountTip: input.amount_tip } : {}),
        ...(input.card_number ? { cardNumber: input.card_number } : {}),
      }),
    });
  });
  router.post('/cancel-action', async (req, res) => {
    const input = parseInput(CancelActionSchema, req.body ?? {});
    res.json({ data: await terminal.cancelAction(scopeOf(req), input.reader_id) });
  });

  const terminals = Router();
  terminals.post('/', async (req, res) => {
    const input = parseInput(RegisterReaderSchema, req.body ?? {});
    res.status(201).json({ data: await terminal.registerReader(scopeOf(req), input) });
  });
  terminals.delete('/:id', deleteReader);
  return { terminal: router, terminals };
}

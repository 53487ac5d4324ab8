import type { PosApi } from '../../shared/api/client.js';
import type { CreateTransactionParams, Customer, Dispute, Payout, Reader, Transaction } from '../../shared/api/types.js';
import { ApiRequestError } from '../../shared/api/errors.js';
import { CliError, usageError } from '../errors.js';
import type { CliContext } from '../context.js';
import { TRIGGER_DOES, TRIGGERABLE, type Triggerable } from './trigger.js';
import { applyOverrides, type OverrideFlags, parseOverrides } from './trigger-overrides.js';

/** Test cards of the processor's test mode (Stripe's names, which the simulator knows too). */
const SUCCEEDS = 'pm_card_visa';
const DECLINES = 'pm_card_chargeDeclined';
/** Paid, then disputed by the cardholder as fraudulent a moment later. */
const DISPUTED = 'pm_card_createDispute';
/** Paid, with the money available to pay out at once instead of after the pending days. */
const AVAILABLE_AT_ONCE = 'pm_card_bypassPending';
/** Stripe's test bank accounts (routing 110000000): the first pays, the second fails `no_account`. */
const TEST_ROUTING = '110000000';
const BANK_PAYS = '000123456789';
const BANK_FAILS = '000111111116';
/** Our fee on a card payment (spec §8): what a payment brings the balance is the rest. */
const PLATFORM_FEE_PERCENT = 3;
/** 20.00: a round test amount clear of the minimum and of the card-present test amounts whose cents pick a decline. */
const AMOUNT = 2000;
/** 2.00: the tip the customer adds on the reader in terminal.payment.tipped. */
const TIP = 200;

/**
 * How long a trigger waits for the processor's side of it (a dispute opening, a decision, a bank's
 * answer): the simulator takes a second or two; Stripe's test mode usually under a minute.
 */
const WAIT_MS = 90_000;
/** How often it looks: each look is one cheap GET, and a quarter second feels immediate. */
const POLL_MS = 250;

type Triggered = { kind: 'payment'; object: Transaction } | { kind: 'dispute'; object: Dispute } | { kind: 'payout'; object: Payout } | { kind: 'customer'; object: Customer };

/** The --override/--add/--remove of a run, made on every body its trigger sends. */
type Changes = ReturnType<typeof parseOverrides>;

async function createPayment(api: PosApi, body: Partial<CreateTransactionParams>, changes: Changes): Promise<Transaction> {
  return (await api.createTransaction(applyOverrides('payment', { amount: AMOUNT, currency: 'usd', description: 'pos trigger', metadata: { pos_trigger: 'true' }, ...body }, changes))).data;
}

/** Asks until `look` answers something, or says what it was waiting for. */
async function waitFor<T>(what: string, look: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const found = await look();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new CliError(`gave up after ${WAIT_MS / 1000} s waiting for ${what}`);
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

/**
 * On the simulator, a payout waits for the bank's hours like a real one: its control API fires the
 * timers now (every pending timer, so other test objects move on too). Stripe's test mode needs no
 * help, and the wait below covers it.
 */
async function fastForward(api: PosApi): Promise<void> {
  const { processor } = (await api.merchant()).data;
  if (processor.name !== 'stripe-simulator' || !processor.api_base) return;
  const res = await fetch(`${processor.api_base.replace(/\/+$/, '')}/_sim/timers/advance`, { method: 'POST' });
  if (!res.ok) throw new CliError(`the simulator did not fast-forward its timers (HTTP ${res.status})`);
}

async function disputedPayment(api: PosApi, changes: Changes): Promise<Dispute> {
  const paid = await createPayment(api, { payment_method: DISPUTED, confirm: true }, changes);
  return waitFor(`the dispute of payment ${paid.reference}`, async () => (await api.listDisputes({ transaction_id: paid.id, size: 1 })).data[0]);
}

/**
 * Pays out what a fresh payment made available, to the bank account given, and waits for the bank's
 * answer. A balance below zero (disputes lost, their fees) is made good first: the payment is large
 * enough to leave at least the usual amount available after our fee.
 */
async function payout(api: PosApi, bank: string, changes: Changes): Promise<Payout> {
  const available = (await api.balance()).data.available.find((b) => b.currency === 'usd')?.amount ?? 0;
  const deficit = Math.max(0, -available);
  await api.setBankAccount({ account_number: bank, routing_number: TEST_ROUTING });
  try {
    await createPayment(api, { payment_method: AVAILABLE_AT_ONCE, confirm: true, amount: AMOUNT + Math.ceil((deficit * 100) / (100 - PLATFORM_FEE_PERCENT)) }, changes);
    const made = (await api.createPayout(applyOverrides('payout', { currency: 'usd', description: 'pos trigger', metadata: { pos_trigger: 'true' } }, changes))).data;
    await fastForward(api);
    return await waitFor(`payout ${made.reference} to be paid or to fail`, async () => {
      const p = (await api.getPayout(made.id)).data;
      return p.status === 'paid' || p.status === 'failed' || p.status === 'canceled' ? p : undefined;
    });
  } finally {
    // Leave the shop paid out to the account that pays, as a test account starts.
    if (bank !== BANK_PAYS) await api.setBankAccount({ account_number: BANK_PAYS, routing_number: TEST_ROUTING });
  }
}

/** The reader terminal triggers use: the first simulated one, or one registered (with a location) for them. */
async function simulatedReader(api: PosApi): Promise<Reader> {
  const { processor } = (await api.merchant()).data;
  if (processor.name !== 'stripe-simulator' || !processor.api_base) throw usageError('terminal triggers play the customer at a simulated reader: they need the simulator');
  const found = (await api.listReaders()).data.find((r) => r.status === 'online');
  if (found) return found;
  if ((await api.listLocations()).data.length === 0) {
    await api.createLocation({ display_name: 'pos trigger', address: { line1: '1 Market St', city: 'San Francisco', state: 'CA', postal_code: '94105', country: 'US' } });
  }
  return (await api.registerReader({ name: 'pos trigger', registration_code: 'simulated-wpe' })).data;
}

/** A payment on the simulated reader, then what the customer does there. */
async function readerPayment(api: PosApi, changes: Changes, customer: (reader: Reader) => Promise<void>): Promise<Transaction> {
  const reader = await simulatedReader(api);
  const created = (await api.createTerminalPayment(applyOverrides('payment', { amount: AMOUNT, currency: 'usd', terminal_id: reader.id, description: 'pos trigger', metadata: { pos_trigger: 'true' } }, changes))).data;
  if (!created.payment_intent_id) throw new CliError(`payment ${created.reference} has no processor payment to send to the reader`);
  await api.processPayment(created.payment_intent_id, reader.processor_terminal_id);
  await customer(reader);
  return (await api.getTransaction(created.id)).data;
}

async function customerCancels(api: PosApi, reader: Reader): Promise<void> {
  const base = (await api.merchant()).data.processor.api_base?.replace(/\/+$/, '');
  const res = await fetch(`${base}/_sim/readers/${encodeURIComponent(reader.processor_terminal_id)}/customer_cancel`, { method: 'POST' });
  if (!res.ok) throw new CliError(`the simulated reader refused the customer's cancel (HTTP ${res.status})`);
}

async function trigger(api: PosApi, event: Triggerable, changes: Changes): Promise<Triggered> {
  switch (event) {
    case 'payment.created':
      return { kind: 'payment', object: await createPayment(api, {}, changes) };
    case 'payment.succeeded':
      return { kind: 'payment', object: await createPayment(api, { payment_method: SUCCEEDS, confirm: true }, changes) };
    case 'payment.authorized':
      return { kind: 'payment', object: await createPayment(api, { payment_method: SUCCEEDS, confirm: true, capture_method: 'manual' }, changes) };
    case 'payment.canceled': {
      const created = await createPayment(api, {}, changes);
      return { kind: 'payment', object: (await api.cancelTransaction(created.id, { reason: 'requested_by_customer' })).data };
    }
    case 'payment.refunded': {
      const paid = await createPayment(api, { payment_method: SUCCEEDS, confirm: true }, changes);
      await api.refund(paid.id);
      return { kind: 'payment', object: (await api.getTransaction(paid.id)).data };
    }
    case 'payment.failed': {
      // The decline is the point: a 402 here is success for the trigger.
      try {
        await createPayment(api, { payment_method: DECLINES, confirm: true, metadata: { pos_trigger: 'true', pos_trigger_decline: 'true' } }, changes);
      } catch (err) {
        if (!(err instanceof ApiRequestError) || err.status !== 402) throw err;
      }
      const list = await api.listTransactions({ status: 'failed', size: 1 });
      const failed = list.data[0];
      if (!failed) throw new CliError('the declined payment was not found');
      return { kind: 'payment', object: failed };
    }
    case 'dispute.created':
      return { kind: 'dispute', object: await disputedPayment(api, changes) };
    case 'dispute.closed': {
      const opened = await disputedPayment(api, changes);
      // Stripe's test-mode evidence that wins: the dispute closes `won` and the funds come back.
      await api.submitDisputeEvidence(opened.id, { uncategorized_text: 'winning_evidence', submit: true });
      const closed = await waitFor(`dispute ${opened.reference} to close`, async () => {
        const d = (await api.getDispute(opened.id)).data;
        return d.closed_at ? d : undefined;
      });
      return { kind: 'dispute', object: closed };
    }
    case 'payout.paid':
      return { kind: 'payout', object: await payout(api, BANK_PAYS, changes) };
    case 'payout.failed':
      return { kind: 'payout', object: await payout(api, BANK_FAILS, changes) };
    case 'terminal.payment.succeeded':
      return { kind: 'payment', object: await readerPayment(api, changes, async (reader) => void (await api.simulatePayment({ reader_id: reader.processor_terminal_id }))) };
    case 'terminal.payment.tipped':
      return { kind: 'payment', object: await readerPayment(api, changes, async (reader) => void (await api.simulatePayment({ reader_id: reader.processor_terminal_id, amount_tip: TIP }))) };
    case 'terminal.payment.customer_canceled': {
      const open = await readerPayment(api, changes, (reader) => customerCancels(api, reader));
      return { kind: 'payment', object: (await api.cancelTransaction(open.id, { reason: 'requested_by_customer' })).data };
    }
    case 'customer.created':
      return { kind: 'customer', object: (await api.createCustomer(applyOverrides('customer', { name: 'pos trigger', email: 'trigger@example.com', metadata: { pos_trigger: 'true' } }, changes))).data };
  }
}

function describe(t: Triggered): string {
  const o = t.object;
  switch (t.kind) {
    case 'payment':
      return `payment ${t.object.reference} (${o.id}), status ${t.object.status}`;
    case 'dispute':
      return `dispute ${t.object.reference} of payment ${t.object.transaction_id}, status ${t.object.status}`;
    case 'payout':
      return `payout ${t.object.reference} (${o.id}), status ${t.object.status}${t.object.failure_code ? ` (${t.object.failure_code})` : ''}`;
    case 'customer':
      return `customer ${t.object.reference} (${o.id})`;
  }
}

export async function triggerEvent([event]: [string | undefined], options: OverrideFlags & { list?: boolean }, ctx: CliContext): Promise<void> {
  const { out } = ctx;
  if (options.list) {
    const rows = TRIGGERABLE.map((name) => ({ event: name, what: TRIGGER_DOES[name] }));
    if (out.json) out.printJson({ data: rows });
    else out.table(rows);
    return;
  }
  if (!event) throw usageError('name the event to trigger (`pos trigger --list` shows them)');
  if (!(TRIGGERABLE as readonly string[]).includes(event)) throw usageError(`cannot trigger ${event}; choose one of ${TRIGGERABLE.join(', ')}`);
  const changes = parseOverrides(options);
  if (!ctx.api.requireKey().startsWith('sk_test_')) throw usageError('pos trigger makes real test objects: use a test key (sk_test_…)');
  const triggered = await trigger(ctx.api, event as Triggerable, changes);
  if (out.json) out.printJson({ data: triggered.object });
  else out.line(`Triggered ${event}: ${describe(triggered)}`);
}

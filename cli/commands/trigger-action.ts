import { loadClientConfig } from '../../shared/config.js';
import type { PosApi } from '../../shared/api/client.js';
import type { CreateTransactionParams, Transaction } from '../../shared/api/types.js';
import { createApiClient } from '../api.js';
import { CliError, usageError } from '../errors.js';
import { createOutput } from '../output.js';
import type { ApiFlags } from './api-options.js';
import { TRIGGERABLE, type Triggerable } from './trigger.js';

/** Test cards of the processor's test mode (Stripe's names, which the simulator knows too). */
const SUCCEEDS = 'pm_card_visa';
const DECLINES = 'pm_card_chargeDeclined';
/** 20.00: a round test amount clear of the minimum and of the card-present test amounts whose cents pick a decline. */
const AMOUNT = 2000;

async function createPayment(api: PosApi, body: Partial<CreateTransactionParams>): Promise<Transaction> {
  return (await api.createTransaction({ amount: AMOUNT, currency: 'usd', description: 'pos trigger', metadata: { pos_trigger: 'true' }, ...body })).data;
}

async function trigger(api: PosApi, event: Triggerable): Promise<Transaction> {
  switch (event) {
    case 'payment.created':
      return createPayment(api, {});
    case 'payment.succeeded':
      return createPayment(api, { payment_method: SUCCEEDS, confirm: true });
    case 'payment.authorized':
      return createPayment(api, { payment_method: SUCCEEDS, confirm: true, capture_method: 'manual' });
    case 'payment.canceled': {
      const created = await createPayment(api, {});
      return (await api.cancelTransaction(created.id, { reason: 'requested_by_customer' })).data;
    }
    case 'payment.refunded': {
      const paid = await createPayment(api, { payment_method: SUCCEEDS, confirm: true });
      await api.refund(paid.id);
      return (await api.getTransaction(paid.id)).data;
    }
    case 'payment.failed': {
      // The decline is the point: a 402 here is success for the trigger.
      try {
        await createPayment(api, { payment_method: DECLINES, confirm: true, metadata: { pos_trigger: 'true', pos_trigger_decline: 'true' } });
      } catch (err) {
        if (!(err instanceof CliError) || !/declin/i.test(err.message)) throw err;
      }
      const list = await api.listTransactions({ status: 'failed', size: 1 });
      const failed = list.data[0];
      if (!failed) throw new CliError('the declined payment was not found');
      return failed;
    }
  }
}

export async function triggerAction(event: string, flags: ApiFlags & { json?: boolean }): Promise<void> {
  if (!(TRIGGERABLE as readonly string[]).includes(event)) throw usageError(`cannot trigger ${event}; choose one of ${TRIGGERABLE.join(', ')}`);
  const config = loadClientConfig(flags);
  if (!config.apiKey.startsWith('sk_test_')) throw usageError('pos trigger makes real payments: use a test key (sk_test_…)');
  const api = createApiClient(config);
  const out = createOutput(Boolean(flags.json));
  const payment = await trigger(api, event as Triggerable);
  if (out.json) out.printJson({ data: payment });
  else out.line(`Triggered ${event}: payment ${payment.reference} (${payment.id}), status ${payment.status}`);
}

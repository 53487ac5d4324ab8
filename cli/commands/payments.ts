import { type Command, Option } from 'commander';
import { lazy } from '../lazy.js';
import { allOption, limitOption, pageOption, sizeOption } from './list-options.js';
import { liveOption, yesOption } from './safety-options.js';

const currency = () => new Option('--currency <code>', "three-letter currency (default: the merchant's)");

export function registerPaymentCommands(program: Command): void {
  program
    .command('charge')
    .description('Create an online card payment (confirm it here with --payment-method, or client-side with the printed client_secret)')
    .argument('<amount>', 'e.g. 47.50 or 4750c (see `pos help amounts`)')
    .addOption(currency())
    .option('--payment-method <pm>', 'processor payment method to charge now, e.g. pm_card_visa in test mode')
    .option('--capture-manual', 'authorise now, capture later with `pos transactions capture`')
    .option('--description <text>', 'shown on the payment and receipts')
    .option('--email <address>', 'receipt email')
    .option('--customer <uuid>', 'existing customer id')
    .addOption(liveOption())
    .addHelpText('after', '\nExamples:\n  pos charge 47.50 --payment-method pm_card_visa\n  pos charge 4750c --currency eur --json')
    .action(lazy(async () => (await import('./payments-action.js')).charge));

  program
    .command('pay')
    .description('Take an in-person payment on a reader')
    .argument('[amount]', 'e.g. 47.50 or 4750c; default the total of --item lines and --tax')
    .requiredOption('--reader <reader>', 'reader name, tmr_… id or uuid')
    .addOption(currency())
    .option('--description <text>', 'shown on the payment and receipts')
    .option('--item <DESC:PRICE[xQTY]>', 'a cart line shown on the reader, e.g. "Coffee:3.50x2" (repeat for more)', (v: string, prev: string[] = []) => [...prev, v])
    .option('--tax <amount>', 'tax included in the total, shown on the cart (tips are suggested on the rest)')
    .option('--no-tip', 'no tip screen for this payment')
    .option('--no-customer-cancel', 'no cancel button on the reader')
    .option('--wait', 'wait for the outcome; exit 3 if it fails, is canceled, or the customer cancels on the reader (Ctrl-C stops waiting, exit 130, and leaves the payment as it is)')
    .option('--resend <payment>', 'send an open or declined payment (id or reference) to the reader again instead of making a new one: after the customer canceled on the reader, a decline or a timeout')
    .option('--cancel-current', 'if the reader is busy with another payment, cancel that one first (without it, a busy reader is an error naming the payment)')
    .addOption(liveOption())
    .addHelpText(
      'after',
      '\nExamples:\n  pos pay 12.00 --reader "Till 1" --wait\n  pos pay --resend txn_… --reader "Till 1" --wait   # the same payment again, after a cancel or a decline\n  pos pay --item "Coffee:3.50x2" --item "Bagel:2.50" --tax 0.77 --reader "Till 1" --wait\n  pos simulate tap "Till 1"   # in another shell, test mode',
    )
    .action(lazy(async () => (await import('./payments-action.js')).pay));

  const transactions = program.command('transactions').alias('txn').description('List, inspect, capture and cancel payments');
  transactions
    .command('list')
    .description('Payments, newest first')
    .addOption(new Option('--status <status>', 'only this status').choices(['pending', 'requires_capture', 'succeeded', 'failed', 'canceled', 'refunded', 'partially_refunded']))
    .addOption(new Option('--channel <channel>', 'only counter payments (reader or cash) or only online ones').choices(['counter', 'online']))
    .addOption(limitOption())
    .addOption(pageOption())
    .addOption(sizeOption())
    .addOption(allOption())
    .action(lazy(async () => (await import('./payments-action.js')).listTransactions));
  transactions
    .command('get')
    .description('One payment by uuid or txn_ reference')
    .argument('<id>')
    .action(lazy(async () => (await import('./payments-action.js')).getTransaction));
  transactions
    .command('capture')
    .description('Capture a payment authorised with --capture-manual')
    .argument('<id>')
    .option('--amount <amount>', 'capture less than authorised')
    .addOption(liveOption())
    .action(lazy(async () => (await import('./payments-action.js')).captureTransaction));
  transactions
    .command('cancel')
    .description('Cancel an uncaptured payment (terminal payments: the reader is reset first)')
    .argument('<id>')
    .option('--reason <reason>', 'e.g. requested_by_customer, duplicate, abandoned')
    .action(lazy(async () => (await import('./payments-action.js')).cancelTransaction));

  program
    .command('refund')
    .description('Refund a payment, in full or in part')
    .argument('<id>', 'uuid or txn_ reference')
    .option('--amount <amount>', 'part of the payment (default: all that is left)')
    // Stripe's refund reasons: the only ones the processor records, so the CLI takes no other word.
    .addOption(new Option('--reason <reason>', 'why the money goes back').choices(['duplicate', 'fraudulent', 'requested_by_customer']))
    .addOption(yesOption())
    .addOption(liveOption())
    .addHelpText('after', '\nRefunding all that is left of a payment (no --amount, or --amount equal to the rest) asks first on a terminal\nand needs --yes without one; a partial refund does not ask.')
    .action(lazy(async () => (await import('./payments-action.js')).refund));

  const simulate = program.command('simulate').description('Test mode: act as the customer');
  simulate
    .command('tap')
    .description('Tap a test card on a simulated reader (answers once the authorisation is over; a decline exits 3)')
    .argument('<reader>', 'reader name, tmr_… id or uuid')
    .option('--tip <amount>', 'tip the customer adds on the reader (Stripe\'s amount_tip)')
    .option('--tip-option <n>', "pick tip suggestion 1, 2 or 3 on the simulated reader's tip screen first")
    .option('--card <number>', 'card-present test number, e.g. 4000000000009995 declines (insufficient funds)')
    .action(lazy(async () => (await import('./payments-action.js')).simulateTap));
  simulate
    .command('cancel')
    .description('The customer presses cancel on a simulated reader (the payment stays open)')
    .argument('<reader>', 'reader name, tmr_… id or uuid')
    .action(lazy(async () => (await import('./simulate-action.js')).simulateCancel));
  simulate
    .command('screen')
    .description("What a simulated reader's screen shows: cart, tip suggestions, total")
    .argument('<reader>', 'reader name, tmr_… id or uuid')
    .action(lazy(async () => (await import('./simulate-action.js')).simulateScreen));
}

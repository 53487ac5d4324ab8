import { type Command, Option } from 'commander';
import { lazy } from '../lazy.js';
import { allOption, limitOption, pageOption, sizeOption } from './list-options.js';

/** Stripe's dispute statuses (shared/contract/disputes.ts), for `--status`. */
const STATUSES = ['warning_needs_response', 'warning_under_review', 'warning_closed', 'needs_response', 'under_review', 'won', 'lost'];

const collect = (value: string, previous: string[] = []) => [...previous, value];

export function registerDisputeCommands(program: Command): void {
  const disputes = program.command('disputes').description('Disputes (chargebacks) of payments: see them, answer with evidence, or accept');
  disputes
    .command('list')
    .description('Disputes, newest first')
    .option('--transaction <id>', 'only the dispute of this payment (uuid or txn_ reference)')
    .addOption(new Option('--status <status>', 'only this status').choices(STATUSES))
    .addOption(limitOption())
    .addOption(pageOption())
    .addOption(sizeOption())
    .addOption(allOption())
    .action(lazy(async () => (await import('./disputes-action.js')).listDisputes));
  disputes
    .command('get')
    .description('One dispute by uuid or dp_ reference')
    .argument('<id>')
    .action(lazy(async () => (await import('./disputes-action.js')).getDispute));
  disputes
    .command('evidence')
    .description('Save evidence for a dispute; --submit sends it to the card network (it can no longer be changed then)')
    .argument('<id>', 'uuid or dp_ reference')
    .option('--text <text>', 'uncategorized_text: what happened, in your words (test mode: winning_evidence or losing_evidence decides it)')
    .option('--product-description <text>', 'what was sold')
    .option('--customer-communication <file>', 'id of a file uploaded to the processor (file_…) with your messages with the customer')
    .option('--field <name=value>', "any other of Stripe's evidence fields, e.g. shipping_tracking_number=1Z999 (repeatable)", collect)
    .option('--submit', 'submit the evidence now')
    .addHelpText('after', '\nExamples:\n  pos disputes evidence dp_… --product-description "Two espressos" --text "Served at the counter, receipt signed"\n  pos disputes evidence dp_… --submit')
    .action(lazy(async () => (await import('./disputes-action.js')).submitEvidence));
  disputes
    .command('accept')
    .description('Accept the dispute: the cardholder keeps the money (an inquiry is just closed)')
    .argument('<id>', 'uuid or dp_ reference')
    .action(lazy(async () => (await import('./disputes-action.js')).acceptDispute));
}

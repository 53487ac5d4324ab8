import type { Command } from 'commander';
import { lazy } from '../lazy.js';
import { allOption, limitOption, pageOption, sizeOption } from './list-options.js';
import { yesOption } from './safety-options.js';

const collect = (value: string, previous: string[] = []) => [...previous, value];

function fieldOptions(command: Command, clearing: boolean): Command {
  command
    .option('--name <name>')
    .option('--email <address>')
    .option('--phone <number>')
    .option('--description <text>')
    .option('--metadata <key=value>', `a metadata pair (repeatable)${clearing ? '; key= removes the key' : ''}`, collect);
  if (clearing) command.option('--clear <field>', 'empty a field: name, email, phone or description (repeatable)', collect);
  return command;
}

export function registerCustomerCommands(program: Command): void {
  const customers = program.command('customers').description('Customers that online payments name (customer_id)');
  fieldOptions(customers.command('create').description('Create a customer'), false)
    .addHelpText('after', '\nExample:\n  pos customers create --name "Ada Lovelace" --email ada@example.com --metadata tier=gold')
    .action(lazy(async () => (await import('./customers-action.js')).createCustomer));
  customers
    .command('list')
    .description('Customers, newest first')
    .addOption(limitOption())
    .addOption(pageOption())
    .addOption(sizeOption())
    .addOption(allOption())
    .action(lazy(async () => (await import('./customers-action.js')).listCustomers));
  customers
    .command('get')
    .description('One customer by uuid or cus_ reference')
    .argument('<id>')
    .action(lazy(async () => (await import('./customers-action.js')).getCustomer));
  fieldOptions(customers.command('update').description('Change what is given; the rest stays').argument('<id>', 'uuid or cus_ reference'), true).action(
    lazy(async () => (await import('./customers-action.js')).updateCustomer),
  );
  customers
    .command('delete')
    .description('Delete a customer: it can no longer be found or named by new payments')
    .argument('<id>', 'uuid or cus_ reference')
    .addOption(yesOption())
    .action(lazy(async () => (await import('./customers-action.js')).deleteCustomer));
}

import { type Command, Option } from 'commander';
import { lazy } from '../lazy.js';
import { yesOption } from './safety-options.js';
import { allOption, limitOption, pageOption } from './list-options.js';

/** Webhook endpoint management (spec §4.8). Live delivery tools (listen, events, trigger) live elsewhere. */
export function registerWebhookEndpointCommands(program: Command): void {
  const webhooks = program.command('webhooks').description('Webhook endpoints of the key’s mode');
  webhooks
    .command('create')
    .description('Register an endpoint that receives payment events')
    .argument('<url>', 'https URL of your receiver')
    .action(lazy(async () => (await import('./webhook-endpoints-action.js')).createEndpoint));
  webhooks
    .command('list')
    .description('Registered endpoints')
    .addOption(limitOption())
    .addOption(pageOption())
    .addOption(allOption())
    .action(lazy(async () => (await import('./webhook-endpoints-action.js')).listEndpoints));
  webhooks
    .command('get')
    .description('One endpoint by uuid or we_ reference')
    .argument('<id>')
    .action(lazy(async () => (await import('./webhook-endpoints-action.js')).getEndpoint));
  webhooks
    .command('update')
    .description('Change what is given: its URL, the events it receives, its description; --enable makes a disabled endpoint active again')
    .argument('<id>')
    .option('--url <url>', 'https URL of your receiver')
    .option('--events <types>', 'comma-separated event types (families such as payment.* too)')
    .option('--description <text>', 'what it is for (an empty string clears it)')
    .addOption(new Option('--enable', 'make it active again').conflicts('disable'))
    .option('--disable', 'stop deliveries to it')
    .action(lazy(async () => (await import('./webhook-endpoints-action.js')).updateEndpoint));
  webhooks
    .command('roll-secret')
    .description('A new signing secret, printed once; the old one also signs for 24 hours')
    .argument('<id>')
    .addOption(yesOption())
    .action(lazy(async () => (await import('./webhook-endpoints-action.js')).rollEndpointSecret));
  webhooks
    .command('delete')
    .description('Remove an endpoint')
    .argument('<id>')
    .addOption(yesOption())
    .action(lazy(async () => (await import('./webhook-endpoints-action.js')).deleteEndpoint));
}

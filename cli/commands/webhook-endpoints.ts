import type { Command } from 'commander';
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
    .command('delete')
    .description('Remove an endpoint')
    .argument('<id>')
    .addOption(yesOption())
    .action(lazy(async () => (await import('./webhook-endpoints-action.js')).deleteEndpoint));
}

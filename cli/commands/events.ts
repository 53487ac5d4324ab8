import type { Command } from 'commander';
import { ioOf } from '../io.js';
import { addApiOptions, type ApiFlags } from './api-options.js';

export interface EventsListFlags extends ApiFlags {
  type?: string;
  page?: string;
  size?: string;
  json?: boolean;
}

export function registerEventsCommands(program: Command): void {
  const events = program.command('events').description('The event log: what was emitted and what became of each webhook delivery');
  addApiOptions(
    events
      .command('list')
      .description('List events, newest first')
      .option('--type <type>', 'only events of this type, e.g. payment.succeeded')
      .option('--page <n>', 'page, from 1', '1')
      .option('--size <n>', 'events per page, 1–100', '10')
      .option('--json', 'print the API answer as JSON'),
  ).action(async (_options: EventsListFlags, command: Command) => {
    // --server, --api-key and --json are also global options, parsed by the program first: read both levels, then the profile.
    const options = await (await import('../profile-flags.js')).withProfile(command.optsWithGlobals<EventsListFlags>(), ioOf(command));
    const { listEventsAction } = await import('./events-action.js');
    await listEventsAction(options, ioOf(command));
  });
  addApiOptions(
    events
      .command('get')
      .description('Show an event with its deliveries and their attempts')
      .argument('<id>', 'event id (evt_…)')
      .option('--json', 'print the API answer as JSON'),
  ).action(async (id: string, _options: ApiFlags & { json?: boolean }, command: Command) => {
    // --server, --api-key and --json are also global options, parsed by the program first: read both levels, then the profile.
    const options = await (await import('../profile-flags.js')).withProfile(command.optsWithGlobals<ApiFlags & { json?: boolean }>(), ioOf(command));
    const { getEventAction } = await import('./events-action.js');
    await getEventAction(id, options, ioOf(command));
  });
  addApiOptions(
    events
      .command('resend')
      .description('Send an event again to one webhook endpoint (one attempt, now)')
      .argument('<id>', 'event id (evt_…)')
      .requiredOption('--endpoint <id>', 'webhook endpoint uuid or we_ reference')
      .option('--json', 'print the API answer as JSON'),
  )
    .addHelpText('after', '\nExample:\n  pos events resend evt_1hQk2n0aZ1bC3dE4fG5h --endpoint we_8fQk2n0aZ1bC3dE4fG5h')
    .action(async (id: string, _options: ApiFlags & { endpoint: string; json?: boolean }, command: Command) => {
      // --server, --api-key and --json are also global options, parsed by the program first: read both levels, then the profile.
      const options = await (await import('../profile-flags.js')).withProfile(command.optsWithGlobals<ApiFlags & { endpoint: string; json?: boolean }>(), ioOf(command));
      const { resendEventAction } = await import('./events-action.js');
      await resendEventAction(id, options, ioOf(command));
    });
}

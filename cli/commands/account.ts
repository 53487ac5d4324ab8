import type { Command } from 'commander';
import { ioOf } from '../io.js';
import { lazy } from '../lazy.js';

export function registerAccountCommands(program: Command): void {
  program
    .command('login')
    .description('Check an API key against the server and save both in a profile')
    .option('--name <profile>', 'profile to save into (default: --profile, then the current one)')
    .addHelpText('after', '\nThe key and server come from --api-key/--server (or POS_API_KEY/POS_SERVER_URL):\n  pos login --api-key sk_test_… --server http://127.0.0.1:4242\n  pos --profile shop2 login --api-key sk_live_…')
    .action(lazy(async () => (await import('./account-action.js')).login));

  const config = program.command('config').description('Profiles in the config file (POS_CONFIG_DIR, default ~/.config/pos)');
  config
    .command('list')
    .description('Profiles, keys shown as their last four')
    .action(lazy(async () => (await import('./account-action.js')).configList));
  config
    .command('get')
    .description("A value of the current profile: server, api_key, merchant_id or business_name")
    .argument('<key>')
    .action(lazy(async () => (await import('./account-action.js')).configGet));
  config
    .command('set')
    .description('Set a value of the current profile (server or api_key)')
    .argument('<key>')
    .argument('<value>')
    .action(lazy(async () => (await import('./account-action.js')).configSet));
  config
    .command('use')
    .description('Make a profile the current one')
    .argument('<profile>')
    .action(lazy(async () => (await import('./account-action.js')).configUse));
  config
    .command('remove')
    .description('Forget a profile')
    .argument('<profile>')
    .action(lazy(async () => (await import('./account-action.js')).configRemove));
  config
    .command('path')
    .description('Where the config file is')
    .action(lazy(async () => (await import('./account-action.js')).configPath));

  program
    .command('merchant')
    .description('The merchant of the API key, with its mode and processor details')
    .action(lazy(async () => (await import('./account-action.js')).merchant));

  program
    .command('completion')
    .description('Print a shell completion script')
    .argument('<shell>', 'bash, zsh or fish')
    .addHelpText('after', '\nInstall:\n  bash: pos completion bash > ~/.local/share/bash-completion/completions/pos\n  zsh:  pos completion zsh > "${fpath[1]}/_pos"\n  fish: pos completion fish > ~/.config/fish/completions/pos.fish')
    .action(async (shell: string, _options: unknown, command: Command) => {
      const { completionScript } = await import('../completion.js');
      ioOf(command).stdout.write(completionScript(shell, command.parent ?? program));
    });
  // What the completion scripts run to offer names after --reader, --location and --profile.
  program
    .command('__complete', { hidden: true })
    .argument('<what>', 'readers, locations, profiles or operations')
    .action(lazy(async () => (await import('../completion-names.js')).completeNames));
}

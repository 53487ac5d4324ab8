import type { Command } from 'commander';

export function registerSimulatorCommands(program: Command): void {
  program
    .command('simulator')
    .description('Run the processor simulator on its own (a stateful stand-in for the part of Stripe we use)')
    .option('--port <port>', 'port to listen on', '12111')
    .option('--host <host>', 'address to bind', '127.0.0.1')
    .option('--data-dir <dir>', 'state lives in <dir>/simulator (env POS_DATA_DIR, default ./.pos)')
    .option('--master-key-file <path>', 'the main key its secrets are encrypted under (env POS_MASTER_KEY or POS_MASTER_KEY_FILE; default <dir>/master.key, made on first start)')
    .addHelpText('after', '\nThe simulator prints its platform keys; point the stripe SDK at it with host/port/protocol options.')
    .action(async (options: { port: string; host: string; dataDir?: string; masterKeyFile?: string }) => {
      const { simulatorAction } = await import('./simulator-action.js');
      await simulatorAction(options);
    });
}

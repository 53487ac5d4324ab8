import type { Command } from 'commander';
import { ioOf } from '../io.js';
import type { SimulatorFlags } from './simulator-action.js';

export const DEFAULT_PROCESSOR_WEBHOOK_URL = 'http://127.0.0.1:4242/processor/webhooks';

export function registerSimulatorCommands(program: Command): void {
  const simulator = program
    .command('simulator')
    .description('Run the processor simulator on its own (a stateful stand-in for the part of Stripe we use)')
    .option('--port <port>', 'port to listen on', '12111')
    .option('--host <host>', 'address to bind', '127.0.0.1')
    .option('--data-dir <dir>', 'state lives in <dir>/simulator (env POS_DATA_DIR, default ./.pos-simulator: never the .pos of a pos server or pos up)')
    .option('--master-key-file <path>', 'the main key its secrets are encrypted under (env POS_MASTER_KEY or POS_MASTER_KEY_FILE; default <dir>/master.key, made on first start)')
    .option('--log-level <level>', 'info: a line per request on stderr (default); warn: none per request, problems still; silent (env POS_LOG_LEVEL)')
    .addHelpText('after', '\nThe simulator prints its platform keys; `pos simulator env` prints the environment of the pos servers that share it.')
    .action(async (options: SimulatorFlags) => {
      const { simulatorAction } = await import('./simulator-action.js');
      await simulatorAction(options);
    });
  simulator
    .command('env')
    .description('Print the environment every pos server sharing this simulator needs (keys, webhook signing secrets), then exit; run it before starting the simulator')
    .option('--port <port>', 'the port the simulator will listen on', '12111')
    .option('--host <host>', 'the address servers reach it at', '127.0.0.1')
    .option('--data-dir <dir>', 'the same --data-dir as the simulator (default ./.pos-simulator)')
    .option('--master-key-file <path>', 'the same main key as the simulator')
    .option('--webhook-url <url>', "where the simulator sends the processor's events: the servers' /processor/webhooks, behind the load balancer", DEFAULT_PROCESSOR_WEBHOOK_URL)
    .addHelpText('after', '\nExample:\n  pos simulator env --data-dir ./sim > pos.env && pos simulator --data-dir ./sim &\n  set -a && . ./pos.env && set +a && pos server')
    .action(async (_options: unknown, command: Command) => {
      const { simulatorEnv } = await import('./simulator-action.js');
      // --port, --host, --data-dir are also `pos simulator`'s own options: read both levels.
      await simulatorEnv(command.optsWithGlobals<SimulatorFlags & { webhookUrl: string }>(), ioOf(command));
    });
}

import { Command, CommanderError, Option } from 'commander';
import { debugEnabled } from '../shared/config.js';
import { POS_VERSION } from '../shared/version.js';
import { reportError } from './errors.js';
import { ExitCode } from './exit-codes.js';
import { attachIo, type CliIo, processIo } from './io.js';
import { COLOR_MODES, type ColorMode, colorEnabled, paint } from './color.js';
import { OUTPUT_FORMATS } from './output.js';
import { registerAdminCommands } from './commands/admin.js';
import { registerOperateCommands } from './commands/operate.js';
import { registerAgentCommands } from './commands/agent.js';
import { registerServerCommands } from './commands/server.js';
import { registerSimulatorCommands } from './commands/simulator.js';
import { registerEventsCommands } from './commands/events.js';
import { registerListenCommands } from './commands/listen.js';
import { registerTriggerCommands } from './commands/trigger.js';
import { registerAccountCommands } from './commands/account.js';
import { registerLinkCommands } from './commands/links.js';
import { registerCheckoutCommands } from './commands/checkout.js';
import { registerPaymentCommands } from './commands/payments.js';
import { registerDisputeCommands } from './commands/disputes.js';
import { registerPayoutCommands } from './commands/payouts.js';
import { registerCustomerCommands } from './commands/customers.js';
import { registerKeyCommands } from './commands/keys.js';
import { registerAuditCommands } from './commands/audit.js';
import { registerReportCommands } from './commands/report.js';
import { registerTerminalCommands } from './commands/terminal.js';
import { registerUpCommands } from './commands/up.js';
import { registerWebhookEndpointCommands } from './commands/webhook-endpoints.js';
import { registerApiCommands } from './commands/api.js';
import { registerLogsCommands } from './commands/logs.js';

const HELP_AFTER = `
Amounts: 47.50 or 47.5 is 4750 cents in a two-decimal currency, 4750c is 4750 minor units in any;
zero-decimal currencies (JPY…) take whole numbers; 47,50 is 47.50. Refused: a comma that could
separate thousands (1,000 or 1,000.00), extra decimals (47.505), signs, zero. Configuration: --server/POS_SERVER_URL, --api-key/POS_API_KEY,
--profile/POS_PROFILE; profiles live in POS_CONFIG_DIR (default ~/.config/pos)/config.json.

Exit codes: 0 ok, 1 API error, 2 usage or configuration (or a refusal: no --yes, no --live),
3 payment failed or canceled (pay --wait, simulate tap), 4 audit trail broken (pos audit verify),
130 interrupted by Ctrl-C while waiting (the payment is left as it is).`;

/**
 * The `pos` program, printing to and reading its environment from `io`. Command groups are declared
 * in cli/commands/<group>.ts and import their actions lazily, so `pos --help` loads commander and
 * nothing else.
 */
export function buildProgram(io: CliIo = processIo()): Command {
  const program = new Command('pos')
    .description('Payments and point-of-sale: the /v1 API server, processor simulator, reader agent and counter tools')
    .version(POS_VERSION)
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    // Before any command is added: each copies its parent's output settings when it is made.
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
      outputError: (text, write) => write(paint(colorEnabled(program.opts<{ color?: ColorMode }>().color, io.env, io.stderr), 'red', text)),
    })
    .addOption(new Option('--server <url>', 'API server (env POS_SERVER_URL, default http://127.0.0.1:4242)'))
    .addOption(new Option('--api-key <key>', 'secret API key sk_…, or a restricted key rk_… (env POS_API_KEY)'))
    .addOption(new Option('--profile <name>', 'profile of the config file (env POS_PROFILE)'))
    .option('--json', "print the API's JSON instead of tables (the same as --format json)")
    .addOption(new Option('--format <format>', 'table, json (the API\'s JSON) or jsonl (one JSON object a line, a list item by item)').choices(OUTPUT_FORMATS))
    .option('--fields <a,b>', 'print only these fields: keys of each object with json/jsonl (a.b for nested), columns of a table')
    .addOption(new Option('--color <when>', 'colour statuses and errors: auto (a terminal, unless NO_COLOR; CLICOLOR_FORCE forces), always or never').choices(COLOR_MODES))
    .configureHelp({ showGlobalOptions: true })
    .addHelpText('after', HELP_AFTER);
  registerUpCommands(program);
  registerPaymentCommands(program);
  registerDisputeCommands(program);
  registerPayoutCommands(program);
  registerCustomerCommands(program);
  registerTerminalCommands(program);
  registerLinkCommands(program);
  registerCheckoutCommands(program);
  registerWebhookEndpointCommands(program);
  registerReportCommands(program);
  registerAccountCommands(program);
  registerKeyCommands(program);
  registerAuditCommands(program);
  registerApiCommands(program);
  registerLogsCommands(program);
  registerServerCommands(program);
  registerSimulatorCommands(program);
  registerAdminCommands(program);
  registerOperateCommands(program);
  registerListenCommands(program);
  registerEventsCommands(program);
  registerTriggerCommands(program);
  registerAgentCommands(program);
  attachIo(program, io);
  return program;
}

/** The exit code set so far: 0 unless the command has already failed. */
function exitCodeSoFar(): number {
  return Number(process.exitCode ?? ExitCode.ok);
}

/**
 * Every way out of `pos` that is not the command's own ends as one line on stderr (the stack only
 * with DEBUG): an error escaping from a callback, a rejection nobody awaited, a failed write.
 * A reader that stops early (`pos transactions list | head -1`) closes stdout: `pos` then stops
 * quietly with the exit code so far, as a Unix tool killed by SIGPIPE would without the noise.
 */
export function installProcessHandlers(debug: boolean): void {
  const write = (line: string) => process.stderr.write(`${line}\n`);
  const fail = (err: unknown) => {
    process.exit(reportError(err, debug, write));
  };
  process.on('uncaughtException', fail);
  process.on('unhandledRejection', fail);
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(exitCodeSoFar());
    // EIO: the terminal hung up. Whoever handles SIGHUP (`pos up`) finishes its own shutdown.
    else if (err.code !== 'EIO') fail(err);
  });
  // With stderr gone there is nowhere left to report anything; the exit code still tells.
  process.stderr.on('error', () => undefined);
}

/**
 * Runs `pos` with `args` (the arguments after the program's name) on `io` and resolves with its exit
 * code; it neither sets the process's exit code nor exits, so it can run inside another program.
 */
export async function run(args: readonly string[], io: CliIo): Promise<ExitCode> {
  const program = buildProgram(io);
  try {
    await program.parseAsync([...args], { from: 'user' });
    return ExitCode.ok;
  } catch (err) {
    // Help and version are "errors" to commander; they exit 0 and have already printed.
    if (err instanceof CommanderError) return err.exitCode === 0 ? ExitCode.ok : ExitCode.usage;
    const red = colorEnabled(program.opts<{ color?: ColorMode }>().color, io.env, io.stderr);
    return reportError(err, debugEnabled(io.env), (line) => io.stderr.write(`${paint(red, 'red', line)}\n`));
  }
}

export async function main(argv: readonly string[]): Promise<void> {
  installProcessHandlers(debugEnabled());
  const code = await run(argv.slice(2), processIo());
  // Success leaves the exit code as it is: a server whose shutdown failed has set 1 itself.
  if (code !== ExitCode.ok) process.exitCode = code;
}

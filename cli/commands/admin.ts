import { COUNTRIES } from '../../shared/money.js';
import { type Command, Option } from 'commander';
import { ioOf } from '../io.js';

/** `--json` is the program's global flag; commander hands it to the action through optsWithGlobals. */
const withJson = <O extends object>(options: O, command: Command): O & { json?: boolean } => ({ ...options, json: Boolean(command.optsWithGlobals().json) });

/** Operator commands that work on the data dir directly, also while a server runs on it. */
export function registerAdminCommands(program: Command): void {
  const admin = program.command('admin').description('Operator commands: merchants, API keys and the main key (work directly on the data dir)');
  const dataDir = () => new Option('--data-dir <dir>', 'data dir of the server (env POS_DATA_DIR, default ./.pos)');
  const databaseUrl = () => new Option('--database-url <url>', 'the PostgreSQL database of the server, if it uses one (env DATABASE_URL)');

  const merchant = admin.command('merchant').description('Create, list and onboard merchants');
  merchant
    .command('create')
    .description('Create a merchant with test and live keys (printed once, stored only as hashes)')
    .requiredOption('--business-name <name>', 'the business name shown to customers')
    .option('--country <CC>', `where the merchant is: ${Object.keys(COUNTRIES).join(', ')}`, 'US')
    .option('--currency <ccc>', "the currency it settles in (default: the country's own)")
    .addOption(dataDir())
    .addOption(databaseUrl())
    .addHelpText('after', '\nExamples:\n  pos admin merchant create --business-name "Corner Café" --json\n  pos admin merchant create --business-name "Kissa Tokyo" --country JP    # settles in JPY')
    .action(async (options: { businessName: string; country: string; currency?: string; dataDir?: string; databaseUrl?: string }, command: Command) => {
      const { createMerchantAction } = await import('./admin-action.js');
      await createMerchantAction(withJson(options, command), ioOf(command));
    });
  merchant
    .command('onboard <id>')
    .description("Print a link to Stripe's hosted onboarding for the merchant's connected account (asks the running server)")
    .addOption(new Option('--mode <mode>', 'which account: live (real onboarding) or test (the test onboarding, with test values)').choices(['live', 'test']).default('live'))
    .option('--return-url <url>', "where the merchant lands after onboarding (default: the server's /onboarding/return page)")
    .option('--refresh-url <url>', "where an expired link sends the merchant (default: the server's /onboarding/refresh page)")
    .addOption(dataDir())
    .addOption(databaseUrl())
    .addHelpText('after', '\nIt asks the server named by --server (env POS_SERVER_URL, default http://127.0.0.1:4242). The link works once and for a few minutes. `pos merchant` (with the merchant\'s key) shows what Stripe still needs.\n\nExamples:\n  pos admin merchant onboard 6f1c…-… --mode live\n  pos admin merchant onboard 6f1c…-… --mode test --json')
    .action(async (id: string, options: { mode: 'live' | 'test'; server?: string; returnUrl?: string; refreshUrl?: string; dataDir?: string; databaseUrl?: string }, command: Command) => {
      const { onboardMerchantAction } = await import('./admin-action.js');
      // --server is the program's global flag (the running server's URL, env POS_SERVER_URL).
      const server = (command.optsWithGlobals() as { server?: string }).server;
      await onboardMerchantAction(id, { ...withJson(options, command), ...(server ? { server } : {}) }, ioOf(command));
    });
  merchant
    .command('list')
    .description('List merchants')
    .addOption(dataDir())
    .addOption(databaseUrl())
    .action(async (options: { dataDir?: string; databaseUrl?: string }, command: Command) => {
      const { listMerchantsAction } = await import('./admin-action.js');
      await listMerchantsAction(withJson(options, command), ioOf(command));
    });

  admin
    .command('agents')
    .description("Every merchant's on-premise agents with the version and protocol each last spoke: who still needs upgrading (docs/operations.md)")
    .addOption(dataDir())
    .addOption(databaseUrl())
    .action(async (options: { dataDir?: string; databaseUrl?: string }, command: Command) => {
      const { listAgentsAction } = await import('./admin-action.js');
      await listAgentsAction(withJson(options, command), ioOf(command));
    });

  const keys = admin.command('keys').description('Manage API keys');
  keys
    .command('roll')
    .description('Issue new secret keys; the old ones keep working for the grace period')
    .requiredOption('--merchant <id>', 'merchant uuid')
    .addOption(new Option('--mode <mode>', 'which secret key to roll').choices(['test', 'live', 'both']).default('both'))
    .option('--grace-hours <hours>', 'how long the old key keeps working (0 = stop now)', '24')
    .addOption(dataDir())
    .addOption(databaseUrl())
    .action(async (options: { merchant: string; mode: 'test' | 'live' | 'both'; graceHours: string; dataDir?: string; databaseUrl?: string }, command: Command) => {
      const { rollKeysAction } = await import('./admin-action.js');
      await rollKeysAction(withJson(options, command), ioOf(command));
    });

  admin
    .command('rotate-master-key')
    .description('Encrypt every secret and customer detail under a new main key, while servers keep serving; then retire the old key')
    .addOption(dataDir())
    .addOption(databaseUrl())
    .option('--master-key-file <path>', 'the key file servers read (env POS_MASTER_KEY or POS_MASTER_KEY_FILE; default <data dir>/master.key)')
    .option('--settle-ms <ms>', 'how long after the switch to keep looking for values sealed under the old key, 0–60000: every running server hears of the switch well within the default 5000; shorter for tests only')
    .addHelpText(
      'after',
      '\nWith a key file, a new key is made and written first into it; running servers read it from there.\nWith POS_MASTER_KEY, put the new key first (POS_MASTER_KEY=<new>,<current>) for servers and this command.\nDetails, backups and what to do if a key is lost: docs/keys.md.\n\nExamples:\n  pos admin rotate-master-key\n  pos admin rotate-master-key --database-url postgres://pos@db/pos --master-key-file /etc/pos/master.key',
    )
    .action(async (options: { dataDir?: string; databaseUrl?: string; masterKeyFile?: string; settleMs?: string }, command: Command) => {
      const { rotateMasterKeyAction } = await import('./rotate-key-action.js');
      await rotateMasterKeyAction(withJson(options, command), ioOf(command));
    });
}

import { type Command, Option } from 'commander';
import { ioOf } from '../io.js';

/** `--json` is the program's global flag; commander hands it to the action through optsWithGlobals. */
const withJson = <O extends object>(options: O, command: Command): O & { json?: boolean } => ({ ...options, json: Boolean(command.optsWithGlobals().json) });

const dataDir = () => new Option('--data-dir <dir>', 'data dir of the server (env POS_DATA_DIR, default ./.pos)');
const databaseUrl = () => new Option('--database-url <url>', 'the PostgreSQL database of the server, if it uses one (env DATABASE_URL)');
const databaseSchema = () => new Option('--database-schema <name>', 'its PostgreSQL schema (env POS_DATABASE_SCHEMA)');

/** Operating the store: its migrations, and backups of the embedded one (docs/operations.md). */
export function registerOperateCommands(program: Command): void {
  const migrate = program.command('migrate').description("The database's migrations: which are applied and which this version would apply (docs/operations.md)");
  migrate
    .command('status')
    .description('List applied and pending migrations, and any from a newer version of pos; exit 2 if the database is newer than this pos')
    .addOption(dataDir())
    .addOption(databaseUrl())
    .addOption(databaseSchema())
    .action(async (options: { dataDir?: string; databaseUrl?: string; databaseSchema?: string }, command: Command) => {
      const { migrateStatusAction } = await import('./migrate-action.js');
      await migrateStatusAction(withJson(options, command), ioOf(command));
    });
  migrate
    .command('up')
    .description('Apply the pending migrations now (a server also applies them as it starts)')
    .addOption(dataDir())
    .addOption(databaseUrl())
    .addOption(databaseSchema())
    .action(async (options: { dataDir?: string; databaseUrl?: string; databaseSchema?: string }, command: Command) => {
      const { migrateUpAction } = await import('./migrate-action.js');
      await migrateUpAction(withJson(options, command), ioOf(command));
    });

  program
    .command('backup')
    .description('Copy the embedded SQLite store to a file, consistently, while a server serves from it (the main key is not in it: docs/operations.md)')
    .requiredOption('--to <file>', 'the backup file to write (refused if it exists)')
    .addOption(dataDir())
    .addHelpText('after', '\nOn PostgreSQL use pg_dump or continuous archiving instead (docs/operations.md).\n\nExamples:\n  pos backup --to /var/backups/pos/pos-$(date -u +%Y%m%dT%H%M%SZ).db\n  pos backup --data-dir /var/lib/pos --to /mnt/backup/pos.db')
    .action(async (options: { to: string; dataDir?: string }, command: Command) => {
      const { backupAction } = await import('./backup-action.js');
      await backupAction(withJson(options, command), ioOf(command));
    });
  program
    .command('restore <file>')
    .description('Put a backup in place as the data dir\'s store, after checking its integrity; refused while a server or admin command has the store open')
    .addOption(dataDir())
    .addHelpText('after', '\nA store already in the data dir is kept beside it (pos.db.replaced-<time>), never deleted.\nThe backup needs the main key it was made under: copy master.key into the data dir, or point --master-key-file / POS_MASTER_KEY at it when the server starts.\n\nExamples:\n  pos restore /var/backups/pos/pos-20261127T010000Z.db --data-dir /var/lib/pos')
    .action(async (file: string, options: { dataDir?: string }, command: Command) => {
      const { restoreAction } = await import('./backup-action.js');
      await restoreAction(file, withJson(options, command), ioOf(command));
    });
}

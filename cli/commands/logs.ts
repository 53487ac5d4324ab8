import type { Command } from 'commander';
import { lazy } from '../lazy.js';

export function registerLogsCommands(program: Command): void {
  const logs = program.command('logs').description("The merchant's own API requests");
  logs
    .command('tail')
    .description("Stream this merchant's /v1 requests (the key's mode) as they finish, from every key and client; needs the secret key")
    .option('--status <codes>', 'only these statuses: 200, 4xx, 5xx, comma-separated')
    .option('--method <methods>', 'only these methods, e.g. POST,DELETE')
    .option('--path <prefix>', 'only paths starting with this, e.g. /v1/transactions')
    .addHelpText('after', '\nExamples:\n  pos logs tail\n  pos logs tail --status 4xx,5xx --method POST\n  pos logs tail --format jsonl | jq .path')
    .action(lazy(async () => (await import('./logs-action.js')).tailLogs));
}

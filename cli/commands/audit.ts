import type { Command } from 'commander';
import { lazy } from '../lazy.js';
import { allOption, limitOption, pageOption, sizeOption } from './list-options.js';

export function registerAuditCommands(program: Command): void {
  const audit = program
    .command('audit')
    .description("The audit trail: who changed what, with which key, through which request (the secret key's to read)")
    .addHelpText('after', '\nThe trail is hash-chained: `pos audit verify` checks it. What that proves: docs/api-choices.md (Audit trail).');
  audit
    .command('list', { isDefault: true })
    .description('Entries newest first (the default: `pos audit`)')
    .option('--object <id>', 'only entries about this object: what a request made or changed, or what its path named')
    .option('--key <id>', "only entries made with this API key (its id, from `pos keys list`)")
    .option('--since <time>', 'only entries at or after this time: ISO 8601 (2026-11-21, 2026-11-21T09:00Z) or unix seconds')
    .option('--until <time>', 'only entries at or before this time (a date includes its whole day)')
    .addOption(limitOption())
    .addOption(pageOption())
    .addOption(sizeOption())
    .addOption(allOption())
    .addHelpText('after', '\nExamples:\n  pos audit --object txn_1hQk2n0aZ1bC3dE4fG5h\n  pos audit --key 5f0c…-…  --since 2026-11-21 --json')
    .action(lazy(async () => (await import('./audit-action.js')).listAudit));
  audit
    .command('verify')
    .description('Recompute the hash chain from every entry and name the first one altered or removed; exit 4 when it is broken')
    .option('--expect-head <hash>', 'a head hash printed by an earlier verify and kept elsewhere: it must still be in the chain')
    .action(lazy(async () => (await import('./audit-action.js')).verifyAudit));
}

import type { Command } from 'commander';
import { lazy } from '../lazy.js';
import { liveOption } from './safety-options.js';

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

export function registerApiCommands(program: Command): void {
  program
    .command('api')
    .description('Call any /v1 route and print its answer: METHOD PATH, or an operationId of the API document with its path parameters in order')
    .argument('[method-or-operation]', 'GET, POST or DELETE; or an operationId (createTransaction, refundTransaction, …: `pos api --list`)')
    .argument('[path-or-params...]', 'the path (/v1/transactions, or transactions); after an operationId, its path parameters in order')
    .option('-d, --data <key=value>', 'a body field, typed: numbers, true, false and null as JSON; a.b=v or a[b]=v nests, a[]=v appends; @file.json or @- (stdin) is the whole body', collect)
    .option('-f, --field <key=value>', 'a body field kept as a string (metadata.order=42 sends "42")', collect)
    .option('-q, --query <key=value>', 'a query parameter', collect)
    .option('--idempotency-key <key>', 'sent as Idempotency-Key; a retry with the same key gets the first answer (and lets pos retry a dropped connection)')
    .option('-i, --include', 'print the status line and the response headers before the body')
    .option('--paginate', 'follow a list to its end (page-numbered or starting_after) and print every item as one JSON array')
    .option('--list', 'list the operations of the API document (operationId, method, path) and exit')
    .addOption(liveOption())
    .addHelpText(
      'after',
      `
The answer's body is printed as JSON whatever its status; a 4xx or 5xx exits 1 (docs/cli.md, Exit codes).
Examples:
  pos api GET /v1/transactions -q size=5
  pos api POST /v1/transactions -d amount=1250 -d currency=usd -f metadata.order=42 --idempotency-key order-42
  pos api retrieveTransaction txn_1hQk2n0aZ1bC3dE4fG5h
  pos api POST /v1/webhook-endpoints --data @endpoint.json
  pos api GET /v1/transactions --paginate -q size=100 | jq length
  pos api DELETE /v1/customers/cus_123 -i`,
    )
    .action(lazy(async () => (await import('./api-action.js')).callApi));
}

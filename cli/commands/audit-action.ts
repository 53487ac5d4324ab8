import { describeChainProblem, verifyAuditChain } from '../../shared/audit-chain.js';
import type { AuditEntry } from '../../shared/api/types.js';
import type { CliContext } from '../context.js';
import { printNumbered } from '../pages.js';
import type { ListFlags } from './list-options.js';
import { CliError } from '../errors.js';
import { ExitCode } from '../exit-codes.js';

const PREFIX: Record<NonNullable<AuditEntry['key']>['type'], string> = { secret: 'sk', publishable: 'pk', restricted: 'rk' };

function keyName(e: AuditEntry): string {
  return e.key ? `${PREFIX[e.key.type]}_${e.mode}_…${e.key.last4}` : '';
}

function auditRow(e: AuditEntry) {
  return {
    seq: e.seq,
    created_at: e.created_at.slice(0, 19).replace('T', ' '),
    operation: e.operation,
    status: e.status,
    object: e.object_id ?? e.target_id ?? '',
    key: keyName(e),
    key_id: e.key?.id ?? '',
    request: e.request.id ?? '',
    idempotency_key: e.request.idempotency_key ?? '',
  };
}

export async function listAudit(_args: [], options: { object?: string; key?: string; since?: string; until?: string } & ListFlags, ctx: CliContext): Promise<void> {
  await printNumbered(
    ctx,
    options,
    (page, size) => ctx.api.listAuditLog({ object_id: options.object, key_id: options.key, created_gte: options.since, created_lte: options.until, page, size }),
    auditRow,
    'entries',
  );
}

/** Pages asked for at once while verifying: the API's largest. */
const VERIFY_PAGE_SIZE = 100;

/**
 * Fetches every entry through the API and recomputes the chain here (shared/audit-chain.ts), so
 * the check does not take the server's word for it. Entries written while it pages are either
 * left out (newer than the first page) or seen twice (pages shift by them), never skipped.
 */
export async function verifyAudit(_args: [], options: { expectHead?: string }, ctx: CliContext): Promise<void> {
  const first = await ctx.api.listAuditLog({ page: 1, size: VERIFY_PAGE_SIZE });
  const entries = [...first.data];
  for (let page = 2; page <= first.lastPage; page++) entries.push(...(await ctx.api.listAuditLog({ page, size: VERIFY_PAGE_SIZE })).data);
  const report = verifyAuditChain(entries, { expectedCount: first.totalCount, ...(options.expectHead ? { expectHead: options.expectHead } : {}) });
  const problem = report.problem ? describeChainProblem(report.problem) : null;
  if (ctx.out.json) {
    ctx.out.printJson({ intact: problem === null, entries: report.entries, head: report.head, problem });
  } else if (!problem) {
    if (!report.head) ctx.out.line('The audit trail is empty: nothing to verify.');
    else {
      ctx.out.line(`Intact: ${report.entries} entries, #1 to #${report.head.seq}.`);
      ctx.out.line(`Head: #${report.head.seq} ${report.head.id} ${report.head.hash}`);
      ctx.out.line('Keep the head hash somewhere else; `pos audit verify --expect-head <hash>` later proves nothing up to it was rewritten.');
    }
  }
  if (problem) throw new CliError(`the audit trail is broken: ${problem}`, ExitCode.auditBroken);
}

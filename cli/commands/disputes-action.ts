import type { Dispute } from '../../shared/api/types.js';
import type { CliContext } from '../context.js';
import { printNumbered } from '../pages.js';
import type { ListFlags } from './list-options.js';
import { usageError } from '../errors.js';
import { money } from '../format.js';

function disputeRow(d: Dispute) {
  return {
    reference: d.reference,
    status: d.status,
    amount: money(d.amount, d.currency),
    reason: d.reason,
    due_by: d.evidence_due_by ? d.evidence_due_by.slice(0, 16).replace('T', ' ') : '',
    transaction: d.transaction_id,
    created_at: d.created_at.slice(0, 19).replace('T', ' '),
  };
}

function printDispute(ctx: CliContext, d: Dispute): void {
  if (ctx.out.json) {
    ctx.out.printJson({ data: d });
    return;
  }
  const rows: [string, string][] = [
    ['reference', d.reference],
    ['id', d.id],
    ['status', d.status],
    ['amount', money(d.amount, d.currency)],
    ['reason', d.reason],
    ['transaction', d.transaction_id],
  ];
  if (d.evidence_due_by) rows.push(['evidence due', d.evidence_due_by]);
  if (d.funds_withdrawn_at) rows.push(['funds withdrawn', d.funds_withdrawn_at]);
  if (d.funds_reinstated_at) rows.push(['funds reinstated', d.funds_reinstated_at]);
  if (d.closed_at) rows.push(['closed', d.closed_at]);
  rows.push(['evidence submitted', d.evidence_submission_count ? `${d.evidence_submission_count} time(s)` : 'not yet']);
  for (const [field, value] of Object.entries(d.evidence)) rows.push([`  ${field}`, value.replace(/\s+/g, ' ').slice(0, 80)]);
  if (d.is_test) rows.push(['mode', 'test']);
  const width = Math.max(...rows.map(([k]) => k.length));
  for (const [k, v] of rows) ctx.out.line(`${k.padEnd(width)}  ${v}`);
}

export async function listDisputes(_args: [], options: { transaction?: string; status?: string } & ListFlags, ctx: CliContext): Promise<void> {
  await printNumbered(ctx, options, (page, size) => ctx.api.listDisputes({ transaction_id: options.transaction, status: options.status, page, size }), disputeRow, 'disputes');
}

export async function getDispute([id]: [string], _options: object, ctx: CliContext): Promise<void> {
  printDispute(ctx, (await ctx.api.getDispute(id)).data);
}

export async function submitEvidence(
  [id]: [string],
  options: { text?: string; productDescription?: string; customerCommunication?: string; field?: string[]; submit?: boolean },
  ctx: CliContext,
): Promise<void> {
  const evidence: Record<string, string> = {};
  for (const pair of options.field ?? []) {
    const at = pair.indexOf('=');
    if (at < 1) throw usageError(`--field takes name=value, not "${pair}"`);
    evidence[pair.slice(0, at)] = pair.slice(at + 1);
  }
  if (options.text !== undefined) evidence.uncategorized_text = options.text;
  if (options.productDescription !== undefined) evidence.product_description = options.productDescription;
  if (options.customerCommunication !== undefined) evidence.customer_communication = options.customerCommunication;
  if (Object.keys(evidence).length === 0 && !options.submit) throw usageError('give some evidence (--text, --product-description, --field name=value…) or --submit');
  const res = await ctx.api.submitDisputeEvidence(id, { ...evidence, ...(options.submit ? { submit: true } : {}) });
  if (ctx.out.json) ctx.out.printJson(res);
  else ctx.out.line(`${res.data.reference}: evidence ${options.submit ? 'submitted' : 'saved'}; status ${res.data.status}`);
}

export async function acceptDispute([id]: [string], _options: object, ctx: CliContext): Promise<void> {
  const res = await ctx.api.acceptDispute(id);
  if (ctx.out.json) ctx.out.printJson(res);
  else ctx.out.line(`${res.data.reference}: accepted; status ${res.data.status} (${money(res.data.amount, res.data.currency)} stays with the cardholder)`);
}

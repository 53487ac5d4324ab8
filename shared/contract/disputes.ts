import { ListQuerySchema, listEnvelope, TimestampSchema } from './common.js';
import { z } from './zod.js';

/** Stripe's dispute statuses: `warning_*` are inquiries (no money moves), the rest formal disputes. */
export const DISPUTE_STATUSES = [
  'warning_needs_response',
  'warning_under_review',
  'warning_closed',
  'needs_response',
  'under_review',
  'appeal_needs_response',
  'appeal_under_review',
  'won',
  'lost',
  'prevented',
] as const;

/** Stripe's evidence fields written as prose, where line breaks mean something (server/http/input.ts). */
export const EVIDENCE_PROSE_FIELDS = [
  'access_activity_log',
  'billing_address',
  'cancellation_policy_disclosure',
  'cancellation_rebuttal',
  'duplicate_charge_explanation',
  'product_description',
  'refund_policy_disclosure',
  'refund_refusal_explanation',
  'shipping_address',
  'uncategorized_text',
] as const;

/** Stripe's other text evidence fields: one line each. */
const EVIDENCE_LINE_FIELDS = [
  'customer_email_address',
  'customer_name',
  'customer_purchase_ip',
  'duplicate_charge_id',
  'service_date',
  'shipping_carrier',
  'shipping_date',
  'shipping_tracking_number',
] as const;

/** Stripe's file evidence fields: each takes the id of a file uploaded to the processor (`file_…`). */
const EVIDENCE_FILE_FIELDS = [
  'cancellation_policy',
  'customer_communication',
  'customer_signature',
  'duplicate_charge_documentation',
  'receipt',
  'refund_policy',
  'service_documentation',
  'shipping_documentation',
  'uncategorized_file',
] as const;

export const EVIDENCE_FIELDS = [...EVIDENCE_PROSE_FIELDS, ...EVIDENCE_LINE_FIELDS, ...EVIDENCE_FILE_FIELDS] as const;
export type EvidenceField = (typeof EVIDENCE_FIELDS)[number];

/** Stripe's limits: 20,000 characters per text field and 150,000 for all of a dispute's evidence together. */
const EVIDENCE_FIELD_MAX = 20_000;
const EVIDENCE_TOTAL_MAX = 150_000;

const prose = z.string().max(EVIDENCE_FIELD_MAX);
const line = z.string().max(EVIDENCE_FIELD_MAX);
const file = z.string().regex(/^file_[A-Za-z0-9_]{1,250}$/, 'must be the id of a file uploaded to the processor (file_…)');

export const SubmitEvidenceSchema = z
  .object({
    ...Object.fromEntries(EVIDENCE_PROSE_FIELDS.map((f) => [f, prose.optional()])),
    ...Object.fromEntries(EVIDENCE_LINE_FIELDS.map((f) => [f, line.optional()])),
    ...Object.fromEntries(EVIDENCE_FILE_FIELDS.map((f) => [f, file.optional()])),
    submit: z.boolean().optional().openapi({ description: 'true sends the evidence to the card network; without it the evidence is saved to be completed later' }),
  } as Record<EvidenceField, z.ZodOptional<z.ZodString>> & { submit: z.ZodOptional<z.ZodBoolean> })
  .strict()
  .refine((input) => EVIDENCE_FIELDS.reduce((n, f) => n + (input[f]?.length ?? 0), 0) <= EVIDENCE_TOTAL_MAX, {
    message: `evidence can hold at most ${EVIDENCE_TOTAL_MAX} characters in all`,
  })
  .openapi('SubmitDisputeEvidence', {
    description:
      "Stripe's evidence fields: text fields as text (`uncategorized_text`, `product_description`, …), file fields (`customer_communication`, `receipt`, …) as processor file ids. In test mode `uncategorized_text` `winning_evidence` or `losing_evidence`, submitted, wins or loses the dispute",
  });

export const CloseDisputeSchema = z.object({}).strict().openapi('CloseDispute');

export const DisputeSchema = z
  .object({
    id: z.uuid(),
    object: z.literal('dispute'),
    reference: z.string().openapi({ example: 'dp_8fQk2n0aZ1bC3dE4fG5h' }),
    transaction_id: z.uuid().openapi({ description: 'The disputed payment' }),
    amount: z.number().int().openapi({ description: 'Disputed amount, in minor units' }),
    currency: z.string(),
    reason: z.string().openapi({ description: "The card network's reason, in Stripe's words (fraudulent, product_not_received, general, …)" }),
    status: z.enum(DISPUTE_STATUSES).openapi({ description: "Stripe's dispute status; warning_* are inquiries, which take no money" }),
    evidence: z.record(z.string(), z.string()).openapi({ description: 'The evidence the processor holds, by field' }),
    evidence_submission_count: z.number().int(),
    evidence_due_by: TimestampSchema.nullable().openapi({ description: 'Evidence must be submitted before this' }),
    funds_withdrawn_at: TimestampSchema.nullable(),
    funds_reinstated_at: TimestampSchema.nullable(),
    is_test: z.boolean(),
    metadata: z.record(z.string(), z.string()).openapi({ description: "The disputed payment's metadata" }),
    created_at: TimestampSchema,
    updated_at: TimestampSchema,
    closed_at: TimestampSchema.nullable(),
  })
  .openapi('Dispute');

export const DisputeListQuerySchema = ListQuerySchema.extend({
  transaction_id: z.string().max(255).optional().openapi({ description: 'Only the dispute of this payment (uuid or txn_ reference)' }),
  status: z.enum(DISPUTE_STATUSES).optional(),
}).strict();
export const DisputeListSchema = listEnvelope(DisputeSchema, 'DisputeList');

export type Dispute = z.infer<typeof DisputeSchema>;
export type SubmitEvidenceInput = z.infer<typeof SubmitEvidenceSchema>;
export type DisputeListQuery = z.infer<typeof DisputeListQuerySchema>;

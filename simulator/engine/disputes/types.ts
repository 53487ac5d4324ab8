import type Stripe from 'stripe';
import type { StoredObject } from '../../store.js';
import type { Metadata } from '../shapes.js';

/** The rows and inputs of disputes, which the charges that open them name too. */

export interface DisputeOpenPayload {
  charge: string;
  apiVersion: string;
}

export interface DisputeInternal {
  inquiry: boolean;
  /** On a destination charge: what was pulled back from the connected account, returned on a win. */
  recovered: { account: string; amount: number; fee: number } | null;
  decisionTimerId: string | null;
}

export type DisputeRow = StoredObject<Stripe.Dispute, DisputeInternal>;

/** The text and file-id fields of `evidence` that Stripe's update accepts. */
export const EVIDENCE_FIELDS = [
  'access_activity_log',
  'billing_address',
  'cancellation_policy',
  'cancellation_policy_disclosure',
  'cancellation_rebuttal',
  'customer_communication',
  'customer_email_address',
  'customer_name',
  'customer_purchase_ip',
  'customer_signature',
  'duplicate_charge_documentation',
  'duplicate_charge_explanation',
  'duplicate_charge_id',
  'product_description',
  'receipt',
  'refund_policy',
  'refund_policy_disclosure',
  'refund_refusal_explanation',
  'service_date',
  'service_documentation',
  'shipping_address',
  'shipping_carrier',
  'shipping_date',
  'shipping_documentation',
  'shipping_tracking_number',
  'uncategorized_file',
  'uncategorized_text',
] as const;

export type EvidenceField = (typeof EVIDENCE_FIELDS)[number];

export interface DisputeUpdateInput {
  evidence?: Partial<Record<EvidenceField, string>> | undefined;
  metadata?: Metadata | '' | undefined;
  /** Stripe's default is to submit whatever evidence the request carries. */
  submit?: boolean | undefined;
}

/**
 * When the counter's receipt printer prints the customer's receipt by itself, set per terminal
 * location (`receipt_policy`): `always` on every approved payment and cash sale, `ask` when staff
 * say yes to "Print receipt?", `never` only when asked for (a reprint from the History).
 */
export const RECEIPT_POLICIES = ['always', 'ask', 'never'] as const;
export type ReceiptPolicy = (typeof RECEIPT_POLICIES)[number];

/** A location made without one, and every location made before the field existed. */
export const DEFAULT_RECEIPT_POLICY: ReceiptPolicy = 'always';

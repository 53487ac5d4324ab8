import type { ReceiptPolicy } from '../../shared/receipt-policy.js';

/**
 * Table types. Portable across SQLite and PostgreSQL: timestamps are epoch milliseconds (bigint
 * columns), money is integer minor units, booleans are written as `mode` strings or 0/1 integers,
 * and JSON is stored as text.
 */

export type Mode = 'test' | 'live';

export interface MerchantsTable {
  id: string;
  business_name: string;
  default_currency: string;
  /** ISO 3166-1 alpha-2, upper case (shared/money.ts COUNTRIES). */
  country: string;
  created_at: number;
}

export interface ApiKeysTable {
  id: string;
  merchant_id: string;
  kind: 'secret' | 'publishable' | 'restricted';
  mode: Mode;
  key_hash: string;
  last4: string;
  created_at: number;
  /** Set when the key is rolled: it keeps working until then. Null = no expiry. */
  expires_at: number | null;
  /** What the merchant calls it (restricted keys; null for the keys issued with the merchant). */
  name: string | null;
  /** Restricted keys: their permissions as a JSON array (shared/contract/permissions.ts); null for sk and pk. */
  scopes: string | null;
  /** When the key was revoked: it stopped working then. */
  revoked_at: number | null;
}

export interface CustomersTable {
  id: string;
  reference: string;
  merchant_id: string;
  mode: Mode;
  /** name, email and phone are sealed (server/db/encryption.ts). */
  name: string | null;
  email: string | null;
  phone: string | null;
  description: string | null;
  metadata: string;
  created_at: number;
  updated_at: number;
  /** 1, 2, 3… within the merchant and mode: list pages are index ranges on it, not OFFSET scans. */
  seq: number;
  /** The processor's copy (`cus_…` on Stripe); null for customers made before they were mirrored. */
  processor_customer_id: string | null;
  /** Deleted customers keep their row (payments name them) but are found by nothing. */
  deleted_at: number | null;
}

/** Maintained row counts per merchant, mode and list, so list pages never run COUNT(*). */
export interface CountersTable {
  merchant_id: string;
  mode: Mode;
  name: string;
  value: number;
}

export interface ProcessorAccountsTable {
  merchant_id: string;
  mode: Mode;
  account_id: string;
  created_at: number;
  /** `express` or `custom`, as the account was created; null for accounts made before types were chosen. */
  account_type: string | null;
  /** 0/1 as the processor last said; null until the account is first read. */
  charges_enabled: number | null;
  payouts_enabled: number | null;
  details_submitted: number | null;
  /** JSON `AccountRequirements` (server/accounts/onboarding.ts); null until first read. */
  requirements: string | null;
  synced_at: number | null;
}

export interface ProcessorSettingsTable {
  name: string;
  /** Sealed (server/db/encryption.ts): the processor's webhook endpoints with their secrets. */
  value: string;
}

export interface ProcessorEventsTable {
  id: string;
  mode: Mode;
  type: string;
  object_id: string | null;
  received_at: number;
}

export type TransactionStatus = 'pending' | 'requires_capture' | 'succeeded' | 'failed' | 'canceled' | 'refunded' | 'partially_refunded';
export type PaymentMethodType = 'card' | 'wallet' | 'bank_transfer' | 'ach' | 'terminal' | 'cash';

export interface TransactionsTable {
  id: string;
  reference: string;
  merchant_id: string;
  mode: Mode;
  /** 1, 2, 3… within the merchant and mode (see CustomersTable.seq). */
  seq: number;
  type: 'payment';
  status: TransactionStatus;
  amount: number;
  amount_captured: number;
  amount_refunded: number;
  /** Refunds asked of the processor and not yet settled: reserved so racing refunds never exceed the payment. */
  amount_refund_pending: number;
  currency: string;
  payment_method_type: PaymentMethodType;
  capture_method: 'automatic' | 'manual';
  source: string;
  description: string | null;
  /** Sealed (server/db/encryption.ts). */
  receipt_email: string | null;
  return_url: string | null;
  customer_id: string | null;
  metadata: string;
  platform_fee_cents: number;
  tip_amount: number;
  processor_payment_intent_id: string | null;
  client_secret: string | null;
  card_brand: string | null;
  card_last_four: string | null;
  failure_code: string | null;
  decline_code: string | null;
  failure_message: string | null;
  cancellation_reason: string | null;
  receipt_url: string | null;
  receipt_token: string | null;
  terminal_id: string | null;
  reader_id: string | null;
  link_id: string | null;
  checkout_session_id: string | null;
  created_at: number;
  updated_at: number;
  captured_at: number | null;
  failed_at: number | null;
  canceled_at: number | null;
  refunded_at: number | null;
  disputed_at: number | null;
  /** When the processor was last asked about this payment (events or polls). */
  synced_at: number;
  /** The payment's dispute, once the cardholder disputed it, and its status (Stripe's values). */
  dispute_id: string | null;
  dispute_status: string | null;
  /** Cash sales: the cash handed over and the change given back (minor units); null for every other method. */
  amount_tendered: number | null;
  change_due: number | null;
  /** What the receipt prints of the card that paid (Stripe's `card_present` names; docs/terminal.md). */
  card_read_method: string | null;
  card_application_name: string | null;
  card_aid: string | null;
  card_authorization_code: string | null;
  card_response_code: string | null;
  card_account_type: string | null;
  card_verification_method: string | null;
  /** The processor's `tml_…` location of the reader that took the card: its address heads the receipt. */
  processor_location_id: string | null;
  /** JSON `TerminalOptions` (server/terminal/options.ts) of a terminal payment; null otherwise. */
  terminal_options: string | null;
  /** The terminal location (uuid) of the till that took a counter sale; null for online payments and unattributed old rows. */
  location_id: string | null;
  /** The API key (id) that recorded the payment: a till's own counter key names the till. */
  created_by_key_id: string | null;
  /** A cash sale the agent took offline: the local reference its receipt printed (docs/agent.md). */
  offline_reference: string | null;
}

/** Stripe's dispute statuses; the `warning_*` ones are inquiries, which take no money. */
export type DisputeStatus =
  | 'appeal_needs_response'
  | 'appeal_under_review'
  | 'warning_needs_response'
  | 'warning_under_review'
  | 'warning_closed'
  | 'needs_response'
  | 'under_review'
  | 'won'
  | 'lost'
  | 'prevented';

export interface DisputesTable {
  id: string;
  reference: string;
  merchant_id: string;
  mode: Mode;
  transaction_id: string;
  processor_dispute_id: string;
  amount: number;
  currency: string;
  reason: string;
  status: DisputeStatus;
  /** JSON of the evidence fields the processor holds (Stripe's names). */
  evidence: string;
  /** The disputed payment's metadata (a payment's metadata never changes once made). */
  metadata: string;
  evidence_submission_count: number;
  evidence_due_by: number | null;
  funds_withdrawn_at: number | null;
  funds_reinstated_at: number | null;
  created_at: number;
  updated_at: number;
  closed_at: number | null;
  /** When the processor was last asked about this dispute (events or polls). */
  synced_at: number;
}

/** Stripe's payout statuses. */
export type PayoutStatus = 'pending' | 'in_transit' | 'paid' | 'failed' | 'canceled';

export interface PayoutsTable {
  id: string;
  reference: string;
  merchant_id: string;
  mode: Mode;
  processor_payout_id: string;
  amount: number;
  currency: string;
  status: PayoutStatus;
  /** 1 for a payout the processor made on its schedule, 0 for one asked for through the API. */
  automatic: number;
  description: string | null;
  arrival_date: number | null;
  failure_code: string | null;
  failure_message: string | null;
  /** The merchant's metadata (JSON); the processor's copy carries only our ids. */
  metadata: string;
  created_at: number;
  updated_at: number;
  synced_at: number;
}

export type RefundStatus = 'pending' | 'succeeded' | 'failed' | 'canceled';

export interface RefundsTable {
  id: string;
  reference: string;
  merchant_id: string;
  mode: Mode;
  transaction_id: string;
  amount: number;
  currency: string;
  reason: string | null;
  status: RefundStatus;
  processor_refund_id: string | null;
  failure_reason: string | null;
  metadata: string;
  created_at: number;
  updated_at: number;
}

export interface IdempotencyKeysTable {
  id: string;
  merchant_id: string;
  mode: Mode;
  key: string;
  /** 1 when the client sent the key; 0 for the internal key every unkeyed request gets. */
  client_supplied: number;
  operation: string;
  recovery_point: string;
  /** JSON the steps pass along (e.g. the id of the object being made); sealed, with response_body, when it holds a customer's details. */
  state: string | null;
  locked_at: number | null;
  /** The instance (its lease holder id) running the request; see server/db/leases.ts. */
  locked_by: string | null;
  response_status: number | null;
  response_body: string | null;
  created_at: number;
  updated_at: number;
  expires_at: number;
  /** Failed attempts so far (a retry with the key or the recovery pass); see services/recovery-schedule.ts. */
  attempts: number;
  /** The recovery pass leaves the request alone until then (backoff); null: no failure yet. */
  next_attempt_at: number | null;
  /** The HTTP request that started the work (its Request-Id), for the log line if it is given up. */
  request_id: string | null;
  /** Packed JSON (server/db/packed-json.ts) of the request's origin (server/audit/origin.ts): whose work the recovery pass finishes; cleared when the request finishes. */
  origin: string | null;
}

export interface EventsTable {
  id: string;
  merchant_id: string;
  mode: Mode;
  seq: number;
  type: string;
  object_id: string | null;
  /** JSON; sealed when it holds a customer's details (server/db/encryption.ts). */
  data: string;
  created_at: number;
  /** The /v1 request that caused the event and its idempotency key; null for the processor's news and background work. */
  request_id: string | null;
  idempotency_key: string | null;
}

export interface TerminalLocationsTable {
  id: string;
  merchant_id: string;
  mode: Mode;
  display_name: string;
  /** JSON of the address as given. */
  address: string;
  processor_location_id: string;
  created_at: number;
  /** JSON of the location's on-reader tipping (TippingOut), null when tipping is off. */
  tipping: string | null;
  /** The processor's Terminal Configuration carrying the tipping, once one was made. */
  processor_configuration_id: string | null;
  /** When the counter prints the customer's receipt by itself (shared/receipt-policy.ts). */
  receipt_policy: ReceiptPolicy;
  /** IANA time zone of its receipts, Day view and close-out; null: the server machine's. */
  time_zone: string | null;
  /** When its business day ends, HH:MM local time ('00:00': at midnight). */
  day_ends_at: string;
}

/** Reader status values: `online`, `offline` (see docs/terminal.md). */
export type ReaderStatus = 'online' | 'offline';

export interface TerminalReadersTable {
  id: string;
  merchant_id: string;
  mode: Mode;
  location_id: string;
  name: string;
  serial_number: string;
  model: string;
  /** The processor's `tmr_…` id: what process-payment, cancel-action and simulate-payment take. */
  processor_reader_id: string;
  status: ReaderStatus;
  /** Who said it last: `processor` until an on-premise agent reports, then `agent`. */
  status_source: 'processor' | 'agent';
  last_seen_at: number | null;
  created_at: number;
  /** The agent whose heartbeat last reported the reader (status_source `agent`). */
  agent_id: string | null;
  /** When an agent-reported `online` lapses without a further heartbeat (epoch ms). */
  presence_expires_at: number | null;
  /** The scope's `reader_actions` counter at the reader's last change: agents are pushed rows after the seq they were sent. */
  action_seq: number;
  /** The reader's current or last action (server/terminal/reader-actions.ts); null: none since registration. */
  action_type: string | null;
  /** `canceled`: the action was canceled by us or its payment was canceled (the processor then drops the action). */
  action_status: ReaderActionStatus | null;
  action_payment_intent_id: string | null;
  /** The payment the reader's action was about before this one: its late events are known to be old. */
  action_previous_payment_intent_id: string | null;
  /** 1 once a card was presented for the in-progress action (its intent is `processing`). */
  action_card_presented: number;
  action_failure_code: string | null;
  action_failure_message: string | null;
  /** The processor's time of what is stored (an event's `created`, or when we read it), epoch ms: orders events. */
  action_processor_at: number | null;
  /** Our clock when the action state last changed. */
  action_updated_at: number | null;
  /** When an in-progress action with no news is read from the processor (reconciliation); null when none is in progress. */
  action_check_at: number | null;
  /** Presence as the processor last reported it (registration, events, reads). */
  processor_status: ReaderStatus | null;
  /** When the processor said so (epoch ms): an event's `created`, or when we sent the request it answered; null: never since this was kept. */
  processor_status_at: number | null;
}

export type ReaderActionStatus = 'in_progress' | 'succeeded' | 'failed' | 'canceled';

export interface AgentsTable {
  id: string;
  merchant_id: string;
  mode: Mode;
  name: string;
  version: string;
  heartbeat_ms: number;
  connected_at: number | null;
  last_heartbeat_at: number | null;
  created_at: number;
  /** The key it last connected with (null: not since keys were counted); it counts against that key's agent limit. */
  api_key_id: string | null;
  /** The upstream protocol it last spoke (shared/agent-upstream.ts). */
  protocol: number;
}

/** A version of pos that migrated the database (server/db/store.ts). */
export interface StoreVersionsTable {
  version: string;
  migrated_at: number;
  /** The newest migration that version knew. */
  last_migration: string;
}

export type CounterDeviceKind = 'receipt_printer' | 'customer_display';

/** A receipt printer or customer display an agent drives, as it last reported it (server/terminal/devices.ts). */
export interface CounterDevicesTable {
  merchant_id: string;
  mode: Mode;
  agent_id: string;
  /** The agent's name for the device (`printer`, `display`), unique per agent. */
  device_id: string;
  /** The uuid the API shows. */
  id: string;
  kind: CounterDeviceKind;
  /** How the agent reaches it: a device path, usb:VID:PID or tcp:HOST:PORT. */
  target: string;
  connection: 'serial' | 'usb' | 'tcp';
  status: 'online' | 'offline';
  /** The server's clock when it last knew the device online (a report or its agent's heartbeat). */
  last_seen_at: number | null;
  last_error: string | null;
  paper: 'ok' | 'near_end' | 'out' | null;
  /** Printers only: 1/0, null when not known (offline, or a display). */
  cover_open: number | null;
  drawer_open: number | null;
  queued: number | null;
  /** When `online` lapses without a further heartbeat of its agent (epoch ms); null while offline. */
  presence_expires_at: number | null;
  created_at: number;
  updated_at: number;
}

export type CheckoutSessionStatus = 'open' | 'complete' | 'expired';

export interface CheckoutSessionsTable {
  id: string;
  reference: string;
  merchant_id: string;
  mode: Mode;
  status: CheckoutSessionStatus;
  amount: number;
  currency: string;
  description: string | null;
  /** customer_email, customer_name and customer_details are sealed (server/db/encryption.ts). */
  customer_email: string | null;
  customer_name: string | null;
  success_url: string | null;
  cancel_url: string | null;
  /** JSON array: card, apple_pay, google_pay. */
  payment_method_types: string;
  /** JSON object of the fields the page collects: {email, name, phone, address} booleans. */
  collect: string;
  /** JSON of what the customer typed on the page (email, name, phone, address), null before. */
  customer_details: string | null;
  metadata: string;
  transaction_id: string;
  expires_at: number;
  completed_at: number | null;
  expired_at: number | null;
  created_at: number;
  updated_at: number;
}

export type PaymentLinkStatus = 'open' | 'deactivated';

export interface PaymentLinksTable {
  id: string;
  reference: string;
  merchant_id: string;
  mode: Mode;
  /** Stored status; `expired` is shown once expires_at has passed (nothing needs doing then). */
  status: PaymentLinkStatus;
  amount: number;
  currency: string;
  description: string | null;
  /** Sealed (server/db/encryption.ts). */
  customer_email: string | null;
  success_url: string | null;
  cancel_url: string | null;
  metadata: string;
  expires_at: number;
  deactivated_at: number | null;
  created_at: number;
  updated_at: number;
}

export interface LeasesTable {
  name: string;
  holder: string;
  expires_at: number;
}

export interface RateLimitWindowsTable {
  key: string;
  window_start: number;
  count: number;
}

/** A sliding window of processor sends, keyed by account or account and endpoint (server/processor/budget.ts). */
export interface ProcessorBudgetsTable {
  key: string;
  /** JSON array of epoch milliseconds, oldest first. */
  sends: string;
}

/** A main key values are sealed under, by its id (docs/keys.md). */
export interface EncryptionKeysTable {
  id: string;
  /** A known value sealed under the key: proves at start that the key given is this one. */
  check_value: string;
  created_at: number;
  /** When a rotation left no value under it: from then on no process needs it. */
  retired_at: number | null;
}

/** `primary_key` (the key new values are sealed under) and `legacy_sealed_at`. */
export interface EncryptionSettingsTable {
  name: string;
  value: string;
}

export interface Tables {
  merchants: MerchantsTable;
  api_keys: ApiKeysTable;
  customers: CustomersTable;
  counters: CountersTable;
  processor_accounts: ProcessorAccountsTable;
  processor_settings: ProcessorSettingsTable;
  processor_events: ProcessorEventsTable;
  transactions: TransactionsTable;
  refunds: RefundsTable;
  disputes: DisputesTable;
  payouts: PayoutsTable;
  idempotency_keys: IdempotencyKeysTable;
  events: EventsTable;
  leases: LeasesTable;
  rate_limit_windows: RateLimitWindowsTable;
  processor_budgets: ProcessorBudgetsTable;
  terminal_locations: TerminalLocationsTable;
  terminal_readers: TerminalReadersTable;
  agents: AgentsTable;
  counter_devices: CounterDevicesTable;
  checkout_sessions: CheckoutSessionsTable;
  payment_links: PaymentLinksTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_cursors: WebhookCursorsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  encryption_keys: EncryptionKeysTable;
  encryption_settings: EncryptionSettingsTable;
  audit_log: AuditLogTable;
  audit_heads: AuditHeadsTable;
  store_versions: StoreVersionsTable;
}

/**
 * One change in the audit trail (server/audit/log.ts), chained to the one before: its hash covers
 * the hash of the entry at the seq before it, read from that entry (it is not stored twice).
 */
export interface AuditLogTable {
  id: string;
  merchant_id: string;
  mode: Mode;
  /** Its place in the merchant's and mode's chain, from 1 with no gaps. */
  seq: number;
  created_at: number;
  /** The acting key: its id, kind and last four characters (never the key). */
  key_id: string | null;
  key_type: string | null;
  key_last4: string | null;
  request_id: string | null;
  idempotency_key: string | null;
  /** `POST /v1/transactions/{id}/refunds`, or an agent's report such as `agent drawer_opened`. */
  operation: string;
  /** The id the request's path named, as the client wrote it. */
  target_id: string | null;
  /** The object the answer returned, else the one the path named. */
  object_id: string | null;
  /** The HTTP status answered (200 for an agent's report). */
  status: number;
  /** JSON of what else the entry says (a drawer opening's reason and staff). */
  details: string | null;
  hash: string;
}

/** The last entry of each chain: locked by every writer, so writers never fork the chain. */
export interface AuditHeadsTable {
  merchant_id: string;
  mode: Mode;
  seq: number;
  hash: string;
}

export type WebhookEndpointStatus = 'active' | 'disabled';

export interface WebhookEndpointsTable {
  id: string;
  reference: string;
  merchant_id: string;
  mode: Mode;
  url: string;
  description: string | null;
  /** JSON array of event types, `["*"]` for all. */
  events: string;
  status: WebhookEndpointStatus;
  /** Sealed (server/db/encryption.ts), as is previous_secret. */
  secret: string;
  /** After a roll the old secret still signs (as a second signature) until it expires. */
  previous_secret: string | null;
  previous_secret_expires_at: number | null;
  /** The merchant's event seq when the endpoint was made: it receives only later events. */
  from_seq: number;
  /** Start of the current run of failed attempts; null after any success. */
  failing_since: number | null;
  disabled_reason: string | null;
  disabled_at: number | null;
  created_at: number;
  updated_at: number;
  deleted_at: number | null;
}

export interface WebhookCursorsTable {
  merchant_id: string;
  mode: Mode;
  last_seq: number;
}

export type WebhookDeliveryStatus = 'pending' | 'delivered' | 'failed';

export interface WebhookDeliveriesTable {
  id: string;
  event_id: string;
  endpoint_id: string;
  object_id: string | null;
  event_seq: number;
  /** 1 for a resend asked for by the merchant: outside the per-object ordering. */
  manual: number;
  status: WebhookDeliveryStatus;
  attempts: number;
  next_attempt_at: number;
  /** Set while a worker holds the delivery; next_attempt_at is then the lease's end. */
  claimed_at: number | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: number;
  updated_at: number;
  completed_at: number | null;
}

export interface WebhookAttemptsTable {
  id: string;
  delivery_id: string;
  event_id: string;
  endpoint_id: string;
  attempted_at: number;
  status_code: number | null;
  latency_ms: number;
  error: string | null;
}

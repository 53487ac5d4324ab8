import { type Kysely, type Migration, type MigrationProvider, sql } from 'kysely';

/**
 * Numbered migrations, applied in order at start-up. They use Kysely's schema builder only, so the
 * same source creates the SQLite and the PostgreSQL schema. Never edit a released migration: add
 * the next number.
 */
// Migrations see the database as it was when they were written, not as Tables says it is now.
type AnyDb = Kysely<any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const migrations: Record<string, Migration> = {
  '0001_merchants_and_keys': {
    async up(db: AnyDb) {
      await db.schema
        .createTable('merchants')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('business_name', 'text', (c) => c.notNull())
        .addColumn('default_currency', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('api_keys')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('merchant_id', 'text', (c) => c.notNull().references('merchants.id'))
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('mode', 'text', (c) => c.notNull())
        .addColumn('key_hash', 'text', (c) => c.notNull().unique())
        .addColumn('last4', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint')
        .execute();
      await db.schema.createIndex('api_keys_merchant').on('api_keys').columns(['merchant_id', 'kind', 'mode']).execute();
      await db.schema
        .createTable('counters')
        .addColumn('merchant_id', 'text', (c) => c.notNull().references('merchants.id'))
        .addColumn('mode', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('value', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('counters_pk', ['merchant_id', 'mode', 'name'])
        .execute();
    },
  },
  '0002_customers': {
    async up(db: AnyDb) {
      await db.schema
        .createTable('customers')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('reference', 'text', (c) => c.notNull().unique())
        .addColumn('merchant_id', 'text', (c) => c.notNull().references('merchants.id'))
        .addColumn('mode', 'text', (c) => c.notNull())
        .addColumn('name', 'text')
        .addColumn('email', 'text')
        .addColumn('phone', 'text')
        .addColumn('description', 'text')
        .addColumn('metadata', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .addColumn('seq', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('customers_list').on('customers').columns(['merchant_id', 'mode', 'seq']).unique().execute();
    },
  },
  '0003_processor': {
    async up(db: AnyDb) {
      // One connected account per merchant and mode: Stripe keeps test and live accounts apart.
      await db.schema
        .createTable('processor_accounts')
        .addColumn('merchant_id', 'text', (c) => c.notNull().references('merchants.id'))
        .addColumn('mode', 'text', (c) => c.notNull())
        .addColumn('account_id', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('processor_accounts_pk', ['merchant_id', 'mode'])
        .execute();
      await db.schema
        .createTable('processor_settings')
        .addColumn('name', 'text', (c) => c.primaryKey())
        .addColumn('value', 'text', (c) => c.notNull())
        .execute();
      // Every processor event received, by its id: a redelivery is recognised and applied once.
      await db.schema
        .createTable('processor_events')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('mode', 'text', (c) => c.notNull())
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('object_id', 'text')
        .addColumn('received_at', 'bigint', (c) => c.notNull())
        .execute();
    },
  },
  '0004_payments': {
    async up(db: AnyDb) {
      await db.schema
        .createTable('transactions')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('reference', 'text', (c) => c.notNull().unique())
        .addColumn('merchant_id', 'text', (c) => c.notNull().references('merchants.id'))
        .addColumn('mode', 'text', (c) => c.notNull())
        .addColumn('seq', 'bigint', (c) => c.notNull())
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('amount', 'bigint', (c) => c.notNull())
        .addColumn('amount_captured', 'bigint', (c) => c.notNull())
        .addColumn('amount_refunded', 'bigint', (c) => c.notNull())
        .addColumn('amount_refund_pending', 'bigint', (c) => c.notNull())
        .addColumn('currency', 'text', (c) => c.notNull())
        .addColumn('payment_method_type', 'text', (c) => c.notNull())
        .addColumn('capture_method', 'text', (c) => c.notNull())
        .addColumn('source', 'text', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('receipt_email', 'text')
        .addColumn('return_url', 'text')
        .addColumn('customer_id', 'text')
        .addColumn('metadata', 'text', (c) => c.notNull())
        .addColumn('platform_fee_cents', 'bigint', (c) => c.notNull())
        .addColumn('tip_amount', 'bigint', (c) => c.notNull())
        .addColumn('processor_payment_intent_id', 'text', (c) => c.unique())
        .addColumn('client_secret', 'text')
        .addColumn('card_brand', 'text')
        .addColumn('card_last_four', 'text')
        .addColumn('failure_code', 'text')
        .addColumn('decline_code', 'text')
        .addColumn('failure_message', 'text')
        .addColumn('cancellation_reason', 'text')
        .addColumn('receipt_url', 'text')
        .addColumn('receipt_token', 'text')
        .addColumn('terminal_id', 'text')
        .addColumn('reader_id', 'text')
        .addColumn('link_id', 'text')
        .addColumn('checkout_session_id', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .addColumn('captured_at', 'bigint')
        .addColumn('failed_at', 'bigint')
        .addColumn('canceled_at', 'bigint')
        .addColumn('refunded_at', 'bigint')
        .addColumn('disputed_at', 'bigint')
        .addColumn('synced_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('transactions_list').on('transactions').columns(['merchant_id', 'mode', 'seq']).unique().execute();
      await db.schema.createIndex('transactions_status').on('transactions').columns(['merchant_id', 'mode', 'status', 'seq']).execute();
      // The reconciler's work list: payments still waiting for an outcome, least recently checked first.
      await db.schema.createIndex('transactions_open').on('transactions').columns(['status', 'synced_at']).execute();

      await db.schema
        .createTable('refunds')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('reference', 'text', (c) => c.notNull().unique())
        .addColumn('merchant_id', 'text', (c) => c.notNull().references('merchants.id'))
        .addColumn('mode', 'text', (c) => c.notNull())
        .addColumn('transaction_id', 'text', (c) => c.notNull().references('transactions.id'))
        .addColumn('amount', 'bigint', (c) => c.notNull())
        .addColumn('currency', 'text', (c) => c.notNull())
        .addColumn('reason', 'text')
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('processor_refund_id', 'text', (c) => c.unique())
        .addColumn('failure_reason', 'text')
        .addColumn('metadata', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('refunds_transaction').on('refunds').columns(['transaction_id', 'created_at']).execute();

      // Idempotent requests as recovery points (see server/idempotency/keys.ts).
      await db.schema
        .createTable('idempotency_keys')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('merchant_id', 'text', (c) => c.notNull().references('merchants.id'))
        .addColumn('mode', 'text', (c) => c.notNull())
        .addColumn('key', 'text', (c) => c.notNull())
        .addColumn('client_supplied', 'integer', (c) => c.notNull())
        .addColumn('operation', 'text', (c) => c.notNull())
        .addColumn('request_hash', 'text', (c) => c.notNull())
        .addColumn('recovery_point', 'text', (c) => c.notNull())
        .addColumn('state', 'text')
        .addColumn('locked_at', 'bigint')
        .addColumn('response_status', 'integer')
        .addColumn('response_body', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('idempotency_keys_key').on('idempotency_keys').columns(['merchant_id', 'mode', 'key']).unique().execute();
      await db.schema.createIndex('idempotency_keys_open').on('idempotency_keys').columns(['recovery_point', 'locked_at']).execute();
      await db.schema.createIndex('idempotency_keys_expiry').on('idempotency_keys').columns(['expires_at']).execute();

      // The outbox: every state change writes its event here in the same transaction.
      await db.schema
        .createTable('events')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('merchant_id', 'text', (c) => c.notNull().references('merchants.id'))
        .addColumn('mode', 'text', (c) => c.notNull())
        .addColumn('seq', 'bigint', (c) => c.notNull())
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('object_id', 'text')
        .addColumn('data', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('events_list').on('events').columns(['merchant_id', 'mode', 'seq']).unique().execute();
      await db.schema.createIndex('events_object').on('events').columns(['object_id', 'seq']).execute();
    },
  },
  '0005_webhooks': {
    async up(db: AnyDb) {
      await db.schema
        .createTable('webhook_endpoints')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('reference', 'text', (c) => c.notNull().unique())
        .addColumn('merchant_id', 'text', (c) => c.notNull().references('merchants.id'))
        .addColumn('mode', 'text', (c) => c.notNull())
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('events', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('secret', 'text', (c) => c.notNull())
        .addColumn('previous_secret', 'text')
        .addColumn('previous_secret_expires_at', 'bigint')
        .addColumn('from_seq', 'bigint', (c) => c.notNull())
        .addColumn('failing_since', 'bigint')
        .addColumn('disabled_reason', 'text')
        .addColumn('disabled_at', 'bigint')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .addColumn('deleted_at', 'bigint')
        .execute();
      await db.schema.createIndex('webhook_endpoints_scope').on('webhook_endpoints').columns(['merchant_id', 'mode', 'created_at']).execute();

      // How far the fan-out has turned each merchant's and mode's events into deliveries.
      await db.schema
        .createTable('webhook_cursors')
        .addColumn('merchant_id', 'text', (c) => c.notNull().references('merchants.id'))
        .addColumn('mode', 'text', (c) => c.notNull())
        .addColumn('last_seq', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('webhook_cursors_pk', ['merchant_id', 'mode'])
        .execute();

      await db.schema
        .createTable('webhook_deliveries')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('event_id', 'text', (c) => c.notNull().references('events.id'))
        .addColumn('endpoint_id', 'text', (c) => c.notNull().references('webhook_endpoints.id'))
        .addColumn('object_id', 'text')
        .addColumn('event_seq', 'bigint', (c) => c.notNull())
        .addColumn('manual', 'integer', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull())
        .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
        .addColumn('claimed_at', 'bigint')
        .addColumn('last_status_code', 'integer')
        .addColumn('last_error', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .addColumn('completed_at', 'bigint')
        .execute();
      // The worker's queue: due pending deliveries, oldest due first.
      await db.schema.createIndex('webhook_deliveries_due').on('webhook_deliveries').columns(['status', 'next_attempt_at']).execute();
      // Per-endpoint ordering: is an earlier event about the same object still pending there?
      await db.schema.createIndex('webhook_deliveries_order').on('webhook_deliveries').columns(['endpoint_id', 'object_id', 'status', 'event_seq']).execute();
      await db.schema.createIndex('webhook_deliveries_event').on('webhook_deliveries').columns(['event_id']).execute();

      await db.schema
        .createTable('webhook_attempts')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('delivery_id', 'text', (c) => c.notNull().references('webhook_deliveries.id'))
        .addColumn('event_id', 'text', (c) => c.notNull())
        .addColumn('endpoint_id', 'text', (c) => c.notNull())
        .addColumn('attempted_at', 'bigint', (c) => c.notNull())
        .addColumn('status_code', 'integer')
        .addColumn('latency_ms', 'integer', (c) => c.notNull())
        .addColumn('error', 'text')
        .execute();
      await db.schema.createIndex('webhook_attempts_delivery').on('webhook_attempts').columns(['delivery_id', 'attempted_at']).execute();

      // The event log filters by type.
      await db.schema.createIndex('events_type').on('events').columns(['merchant_id', 'mode', 'type', 'seq']).execute();
    },
  },
  '0006_terminal': {
    async up(db: AnyDb) {
      await db.schema
        .createTable('terminal_locations')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('merchant_id', 'text', (c) => c.notNull().references('merchants.id'))
        .addColumn('mode', 'text', (c) => c.notNull())
        .addColumn('display_name', 'text', (c) => c.notNull())
        .addColumn('address', 'text', (c) => c.notNull())
        .addColumn('processor_location_id', 'text', (c) => c.notNull().unique())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('terminal_locations_merchant').on('terminal_locations').columns(['merchant_id', 'mode', 'created_at']).execute();
      await db.schema
        .createTable('terminal_readers')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('merchant_id', 'text', (c) => c.notNull().references('merchants.id'))
        .addColumn('mode', 'text', (c) => c.notNull())
        .addColumn('location_id', 'text', (c) => c.notNull().references('terminal_locations.id'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('serial_number', 'text', (c) => c.notNull())
        .addColumn('model', 'text', (c) => c.notNull())
        .addColumn('processor_reader_id', 'text', (c) => c.notNull().unique())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('status_source', 'text', (c) => c.notNull())
        .addColumn('last_seen_at', 'bigint')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('terminal_readers_merchant').on('terminal_readers').columns(['merchant_id', 'mode', 'created_at']).execute();
      // The stale sweep's work list: pending terminal payments, oldest first.
      await db.schema.createIndex('transactions_terminal_pending').on('transactions').columns(['payment_method_type', 'status', 'created_at']).execute();
      await db.schema.createIndex('transactions_receipt').on('transactions').columns(['receipt_token']).unique().execute();
    },
  },
  '0007_checkout': {
    async up(db: AnyDb) {
      await db.schema
        .createTable('checkout_sessions')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('reference', 'text', (c) => c.notNull().unique())
        .addColumn('merchant_id', 'text', (c) => c.notNull().references('merchants.id'))
        .addColumn('mode', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('amount', 'bigint', (c) => c.notNull())
        .addColumn('currency', 'text', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('customer_email', 'text')
        .addColumn('customer_name', 'text')
        .addColumn('success_url', 'text')
        .addColumn('cancel_url', 'text')
        .addColumn('payment_method_types', 'text', (c) => c.notNull())
        .addColumn('collect', 'text', (c) => c.notNull())
        .addColumn('customer_details', 'text')
        .addColumn('metadata', 'text', (c) => c.notNull())
        .addColumn('transaction_id', 'text', (c) => c.notNull().references('transactions.id'))
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .addColumn('completed_at', 'bigint')
        .addColumn('expired_at', 'bigint')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
      // The expiry sweep's work list.
      await db.schema.createIndex('checkout_sessions_open').on('checkout_sessions').columns(['status', 'expires_at']).execute();
      await db.schema
        .createTable('payment_links')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('reference', 'text', (c) => c.notNull().unique())
        .addColumn('merchant_id', 'text', (c) => c.notNull().references('merchants.id'))
        .addColumn('mode', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('amount', 'bigint', (c) => c.notNull())
        .addColumn('currency', 'text', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('customer_email', 'text')
        .addColumn('success_url', 'text')
        .addColumn('cancel_url', 'text')
        .addColumn('metadata', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .addColumn('deactivated_at', 'bigint')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('payment_links_list').on('payment_links').columns(['merchant_id', 'mode', 'created_at', 'id']).execute();
      await db.schema.createIndex('transactions_link').on('transactions').columns(['link_id']).execute();
    },
  },
  '0008_agents': {
    async up(db: AnyDb) {
      // On-premise agents, by the id each one generates on first start and keeps in its data dir.
      await db.schema
        .createTable('agents')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('merchant_id', 'text', (c) => c.notNull().references('merchants.id'))
        .addColumn('mode', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('version', 'text', (c) => c.notNull())
        .addColumn('heartbeat_ms', 'integer', (c) => c.notNull())
        .addColumn('connected_at', 'bigint')
        .addColumn('last_heartbeat_at', 'bigint')
        .addColumn('last_report_seq', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.alterTable('terminal_readers').addColumn('agent_id', 'text').execute();
      await db.schema.alterTable('terminal_readers').addColumn('presence_expires_at', 'bigint').execute();
      // The presence expiry pass: agent-reported online readers, soonest expiry first.
      await db.schema.createIndex('terminal_readers_presence').on('terminal_readers').columns(['status_source', 'status', 'presence_expires_at']).execute();
      await db.schema.createIndex('terminal_readers_serial').on('terminal_readers').columns(['merchant_id', 'mode', 'serial_number']).execute();
      // What agents saw readers do, in the order they saw it (the /v1 API does not report it).
      await db.schema
        .createTable('agent_reports')
        .addColumn('agent_id', 'text', (c) => c.notNull())
        .addColumn('seq', 'bigint', (c) => c.notNull())
        .addColumn('merchant_id', 'text', (c) => c.notNull())
        .addColumn('mode', 'text', (c) => c.notNull())
        .addColumn('reader', 'text', (c) => c.notNull())
        .addColumn('activity', 'text', (c) => c.notNull())
        .addColumn('transaction_id', 'text')
        .addColumn('failure_code', 'text')
        .addColumn('observed_at', 'bigint', (c) => c.notNull())
        .addColumn('received_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('agent_reports_pk', ['agent_id', 'seq'])
        .execute();
    },
  },
  '0009_instances': {
    async up(db: AnyDb) {
      // Work that must run on one instance at a time (sweeps) takes a lease here.
      await db.schema
        .createTable('leases')
        .addColumn('name', 'text', (c) => c.primaryKey())
        .addColumn('holder', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .execute();
      // Which instance holds an idempotency key's lock: a lock whose holder is gone is taken over at once.
      await db.schema.alterTable('idempotency_keys').addColumn('locked_by', 'text').execute();
      // Rate-limit windows shared by every instance on PostgreSQL (one process counts in memory on SQLite).
      await db.schema
        .createTable('rate_limit_windows')
        .addColumn('key', 'text', (c) => c.notNull())
        .addColumn('window_start', 'bigint', (c) => c.notNull())
        .addColumn('count', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('rate_limit_windows_pk', ['key', 'window_start'])
        .execute();
    },
  },
  '0010_idempotency_attempts': {
    async up(db: AnyDb) {
      // Failed attempts at an unfinished request and when the recovery pass may try it again, so a
      // request the processor keeps failing is retried with backoff and then given up, never forever.
      await db.schema.alterTable('idempotency_keys').addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0)).execute();
      await db.schema.alterTable('idempotency_keys').addColumn('next_attempt_at', 'bigint').execute();
      // The id of the HTTP request that started the work, named in the log line when it is given up.
      await db.schema.alterTable('idempotency_keys').addColumn('request_id', 'text').execute();
    },
  },
  '0011_idempotency_no_request_hash': {
    async up(db: AnyDb) {
      // A reused key answers with its first result whatever the new request says (docs/payments.md),
      // so a hash of the request had nothing to be compared with.
      await db.schema.alterTable('idempotency_keys').dropColumn('request_hash').execute();
    },
  },
  '0012_merchant_country': {
    async up(db: AnyDb) {
      // Where the merchant is: its connected account's country, its default currency, and whether it
      // may take ACH debits. Merchants made before countries existed were all in the US.
      await db.schema.alterTable('merchants').addColumn('country', 'text', (c) => c.notNull().defaultTo('US')).execute();
    },
  },
  '0013_processor_budgets': {
    async up(db: AnyDb) {
      // The processor's rate budget on PostgreSQL: one sliding window of send times (a JSON array)
      // per platform account and per endpoint, shared by every instance (server/processor/budget.ts).
      await db.schema
        .createTable('processor_budgets')
        .addColumn('key', 'text', (c) => c.primaryKey())
        .addColumn('sends', 'text', (c) => c.notNull())
        .execute();
    },
  },
  '0014_disputes_payouts_customers': {
    async up(db: AnyDb) {
      // Disputes of payments, as the processor reports them; one per payment (a charge is disputed once).
      await db.schema
        .createTable('disputes')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('reference', 'text', (c) => c.notNull().unique())
        .addColumn('merchant_id', 'text', (c) => c.notNull().references('merchants.id'))
        .addColumn('mode', 'text', (c) => c.notNull())
        .addColumn('transaction_id', 'text', (c) => c.notNull().references('transactions.id'))
        .addColumn('processor_dispute_id', 'text', (c) => c.notNull().unique())
        .addColumn('amount', 'bigint', (c) => c.notNull())
        .addColumn('currency', 'text', (c) => c.notNull())
        .addColumn('reason', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('evidence', 'text', (c) => c.notNull())
        .addColumn('metadata', 'text', (c) => c.notNull())
        .addColumn('evidence_submission_count', 'integer', (c) => c.notNull())
        .addColumn('evidence_due_by', 'bigint')
        .addColumn('funds_withdrawn_at', 'bigint')
        .addColumn('funds_reinstated_at', 'bigint')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .addColumn('closed_at', 'bigint')
        .addColumn('synced_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('disputes_list').on('disputes').columns(['merchant_id', 'mode', 'created_at']).execute();
      await db.schema.createIndex('disputes_transaction').on('disputes').columns(['transaction_id']).execute();
      // The polling fallback's work list: disputes still open, least recently checked first.
      await db.schema.createIndex('disputes_open').on('disputes').columns(['closed_at', 'synced_at']).execute();
      await db.schema.alterTable('transactions').addColumn('dispute_id', 'text').execute();
      await db.schema.alterTable('transactions').addColumn('dispute_status', 'text').execute();

      // Payouts from a merchant's connected account to its bank, made by us or by the processor's schedule.
      await db.schema
        .createTable('payouts')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('reference', 'text', (c) => c.notNull().unique())
        .addColumn('merchant_id', 'text', (c) => c.notNull().references('merchants.id'))
        .addColumn('mode', 'text', (c) => c.notNull())
        .addColumn('processor_payout_id', 'text', (c) => c.notNull().unique())
        .addColumn('amount', 'bigint', (c) => c.notNull())
        .addColumn('currency', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('automatic', 'integer', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('arrival_date', 'bigint')
        .addColumn('failure_code', 'text')
        .addColumn('failure_message', 'text')
        .addColumn('metadata', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .addColumn('synced_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('payouts_list').on('payouts').columns(['merchant_id', 'mode', 'created_at']).execute();
      await db.schema.createIndex('payouts_open').on('payouts').columns(['status', 'synced_at']).execute();

      // Customers are mirrored on the processor, and deleted ones are kept (their payments name them).
      await db.schema.alterTable('customers').addColumn('processor_customer_id', 'text').execute();
      await db.schema.alterTable('customers').addColumn('deleted_at', 'bigint').execute();
    },
  },
  '0015_restricted_keys': {
    async up(db: AnyDb) {
      // Restricted keys (rk_) carry a name and their permissions (a JSON array); any key can be
      // revoked, which stops it at once and for good (expiry is the roll's grace).
      await db.schema.alterTable('api_keys').addColumn('name', 'text').execute();
      await db.schema.alterTable('api_keys').addColumn('scopes', 'text').execute();
      await db.schema.alterTable('api_keys').addColumn('revoked_at', 'bigint').execute();
    },
  },
  '0016_merchant_onboarding': {
    async up(db: AnyDb) {
      // The connected account's standing as the processor last reported it (re-read on its
      // account.updated events and now and then): whether it may charge and pay out, and what it
      // still needs. Null columns: never read yet. `requirements` is a JSON object (Stripe's fields).
      for (const [name, type] of [
        ['account_type', 'text'],
        ['charges_enabled', 'integer'],
        ['payouts_enabled', 'integer'],
        ['details_submitted', 'integer'],
        ['requirements', 'text'],
        ['synced_at', 'bigint'],
      ] as const) {
        await db.schema.alterTable('processor_accounts').addColumn(name, type).execute();
      }
    },
  },
  '0017_reader_actions': {
    async up(db: AnyDb) {
      // Each reader's action as the processor's events report it (server/terminal/reader-actions.ts):
      // what the counter shows, pushed to the merchant's agents.
      const readers = () => db.schema.alterTable('terminal_readers');
      await readers().addColumn('action_seq', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
      await readers().addColumn('action_type', 'text').execute();
      await readers().addColumn('action_status', 'text').execute();
      await readers().addColumn('action_payment_intent_id', 'text').execute();
      await readers().addColumn('action_previous_payment_intent_id', 'text').execute();
      await readers().addColumn('action_card_presented', 'integer', (c) => c.notNull().defaultTo(0)).execute();
      await readers().addColumn('action_failure_code', 'text').execute();
      await readers().addColumn('action_failure_message', 'text').execute();
      await readers().addColumn('action_processor_at', 'bigint').execute();
      await readers().addColumn('action_updated_at', 'bigint').execute();
      await readers().addColumn('action_check_at', 'bigint').execute();
      await readers().addColumn('processor_status', 'text').execute();
      // Pushes to agents: the scope's readers changed after the last seq sent.
      await db.schema.createIndex('terminal_readers_action_seq').on('terminal_readers').columns(['merchant_id', 'mode', 'action_seq']).execute();
      // The reconciliation timer: the earliest overdue action.
      await db.schema.createIndex('terminal_readers_action_check').on('terminal_readers').column('action_check_at').execute();
      await db.schema.createIndex('terminal_readers_action_intent').on('terminal_readers').column('action_payment_intent_id').execute();
    },
  },
  '0018_terminal_tipping_carts': {
    async up(db: AnyDb) {
      // A location's on-reader tipping (JSON, null: off) and the processor configuration carrying it.
      await db.schema.alterTable('terminal_locations').addColumn('tipping', 'text').execute();
      await db.schema.alterTable('terminal_locations').addColumn('processor_configuration_id', 'text').execute();
      // A terminal payment's cart and reader options (JSON), kept for the reader and shown on the payment.
      await db.schema.alterTable('transactions').addColumn('terminal_options', 'text').execute();
    },
  },
  '0020_card_receipts': {
    async up(db: AnyDb) {
      // What an EMV receipt must print, from the processor's charge of a paid card payment
      // (payment_method_details.card_present and its receipt), and where the reader stood
      // (the processor's location id), whose address the receipt prints.
      for (const column of [
        'card_read_method',
        'card_application_name',
        'card_aid',
        'card_authorization_code',
        'card_response_code',
        'card_account_type',
        'card_verification_method',
        'processor_location_id',
      ]) {
        await db.schema.alterTable('transactions').addColumn(column, 'text').execute();
      }
    },
  },
  '0021_cash_sales': {
    async up(db: AnyDb) {
      // Cash sales (payment_method_type `cash`): what the customer handed over and the change given.
      await db.schema.alterTable('transactions').addColumn('amount_tendered', 'bigint').execute();
      await db.schema.alterTable('transactions').addColumn('change_due', 'bigint').execute();
    },
  },
  '0022_transactions_channel_counter': {
    async up(db: AnyDb) {
      // GET /v1/transactions?channel= counts a channel from the counter `transactions:counter`
      // (payments of method terminal or cash), kept from now on at creation: count those made before.
      await db
        .insertInto('counters')
        .columns(['merchant_id', 'mode', 'name', 'value'])
        .expression(
          db
            .selectFrom('transactions')
            .select((eb) => ['merchant_id', 'mode', sql.lit('transactions:counter').as('name'), eb.fn.countAll().as('value')])
            .where('payment_method_type', 'in', ['terminal', 'cash'])
            .groupBy(['merchant_id', 'mode']),
        )
        .execute();
    },
  },
  '0023_counter_devices': {
    async up(db: AnyDb) {
      // The receipt printers and customer displays agents report (server/terminal/devices.ts), by
      // the agent and its name for the device; `id` is the uuid the API shows.
      await db.schema
        .createTable('counter_devices')
        .addColumn('merchant_id', 'text', (c) => c.notNull().references('merchants.id'))
        .addColumn('mode', 'text', (c) => c.notNull())
        .addColumn('agent_id', 'text', (c) => c.notNull().references('agents.id'))
        .addColumn('device_id', 'text', (c) => c.notNull())
        .addColumn('id', 'text', (c) => c.notNull().unique())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('target', 'text', (c) => c.notNull())
        .addColumn('connection', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('last_seen_at', 'bigint')
        .addColumn('last_error', 'text')
        .addColumn('paper', 'text')
        .addColumn('cover_open', 'integer')
        .addColumn('drawer_open', 'integer')
        .addColumn('queued', 'integer')
        .addColumn('presence_expires_at', 'bigint')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('counter_devices_pk', ['merchant_id', 'mode', 'agent_id', 'device_id'])
        .execute();
      // The presence expiry pass: online devices, soonest expiry first.
      await db.schema.createIndex('counter_devices_presence').on('counter_devices').columns(['status', 'presence_expires_at']).execute();
    },
  },
  '0024_location_receipt_policy': {
    async up(db: AnyDb) {
      // When a location's counter prints the customer's receipt by itself: always, ask or never.
      await db.schema
        .alterTable('terminal_locations')
        .addColumn('receipt_policy', 'text', (c) => c.notNull().defaultTo('always'))
        .execute();
    },
  },
};

export const migrationProvider: MigrationProvider = {
  getMigrations: async () => migrations,
};

import Database from 'better-sqlite3';
import type { CustomersTable, Mode, TransactionsTable } from '../server/db/schema.js';
import type { CounterName } from '../server/db/counters.js';
import { newIdentity } from '../shared/ids.js';
import { NO_CARD_RECEIPT } from '../server/payments/payment-state.js';

/** Which list the seeded rows belong to: the payments list, or customers while payments are being written. */
export type SeededList = 'transactions' | 'customers';

export interface SeedOptions {
  /** The SQLite file of a migrated data dir (`sqlitePath(dataDir)`); no server may have it open. */
  file: string;
  merchantId: string;
  mode: Mode;
  list: SeededList;
  rows: number;
  /** Creation time of the newest row, epoch ms; older rows are a minute apart. */
  now: number;
}

/**
 * Page cache for the seeding connection, in KiB (negative cache_size). A million rows with random
 * uuid and reference keys touch index pages all over the file; ~512 MiB keeps the indexes of 1M rows
 * (~250 MiB) in memory so each insert stays a memory operation, and the machine has ~24 GiB.
 */
const SEED_CACHE_KIB = 512 * 1024;

/** Newer rows are one minute apart, so 1M rows span about two years like a busy shop's history. */
const ROW_SPACING_MS = 60_000;

function transactionRow(merchantId: string, mode: Mode, seq: number, createdAt: number): TransactionsTable {
  const { id, reference } = newIdentity('transaction');
  return {
    id,
    reference,
    merchant_id: merchantId,
    mode,
    seq,
    type: 'payment',
    status: 'succeeded',
    amount: 4750,
    amount_captured: 4750,
    amount_refunded: 0,
    amount_refund_pending: 0,
    currency: 'usd',
    payment_method_type: 'card',
    capture_method: 'automatic',
    source: 'api',
    description: null,
    receipt_email: null,
    return_url: null,
    customer_id: null,
    metadata: '{}',
    platform_fee_cents: 0,
    tip_amount: 0,
    processor_payment_intent_id: `pi_${reference.slice(4)}`,
    client_secret: null,
    card_brand: 'visa',
    card_last_four: '4242',
    failure_code: null,
    decline_code: null,
    failure_message: null,
    cancellation_reason: null,
    receipt_url: null,
    receipt_token: null,
    terminal_id: null,
    reader_id: null,
    link_id: null,
    checkout_session_id: null,
    created_at: createdAt,
    updated_at: createdAt,
    captured_at: createdAt,
    failed_at: null,
    canceled_at: null,
    refunded_at: null,
    disputed_at: null,
    synced_at: createdAt,
    dispute_id: null,
    dispute_status: null,
    amount_tendered: null,
    change_due: null,
    ...NO_CARD_RECEIPT,
    terminal_options: null,
    location_id: null,
    created_by_key_id: null,
    offline_reference: null,
  };
}

function customerRow(merchantId: string, mode: Mode, seq: number, createdAt: number): CustomersTable {
  const { id, reference } = newIdentity('customer');
  return {
    id,
    reference,
    merchant_id: merchantId,
    mode,
    name: `Customer ${seq}`,
    email: `c${seq}@example.com`,
    phone: null,
    description: null,
    metadata: '{}',
    created_at: createdAt,
    updated_at: createdAt,
    seq,
    processor_customer_id: null,
    deleted_at: null,
  };
}

/**
 * Writes `rows` list rows for one merchant and mode straight into the SQLite file, numbered
 * seq 1..rows as the services number them, and sets the list's counter to `rows` (the services read
 * list sizes from `counters`, never COUNT(*)). One transaction, one prepared insert.
 *
 * The rows are typed by the table interfaces of `server/db/schema.ts` and the column list is taken
 * from the row object, so a column added to the schema fails the type check here, not the benchmark.
 * About 40 s for 1M payments here: six indexes, three of them on random keys (id, reference, the
 * processor's id), and ~4 us per row just generating the references.
 */
export function seedList(options: SeedOptions): { rows: number; seconds: number } {
  const started = process.hrtime.bigint();
  const db = new Database(options.file);
  try {
    // The seed is disposable test data written before any server opens the file: durability and
    // crash safety buy nothing here. The server switches the file back to WAL when it opens it.
    db.pragma('journal_mode = OFF');
    db.pragma('synchronous = OFF');
    db.pragma(`cache_size = -${SEED_CACHE_KIB}`);
    db.pragma('foreign_keys = ON');

    const makeRow = options.list === 'transactions' ? transactionRow : customerRow;
    const columns = Object.keys(makeRow(options.merchantId, options.mode, 1, options.now));
    // Positional parameters: binding 45 named ones per row costs a lookup each, ~5% of the seed time.
    const insert = db.prepare(`insert into ${options.list} (${columns.join(', ')}) values (${columns.map(() => '?').join(', ')})`);
    const setCounter = db.prepare(
      `insert into counters (merchant_id, mode, name, value) values (?, ?, ?, ?)
       on conflict (merchant_id, mode, name) do update set value = excluded.value`,
    );
    const counter: CounterName = options.list;

    db.transaction(() => {
      const oldest = options.now - (options.rows - 1) * ROW_SPACING_MS;
      for (let seq = 1; seq <= options.rows; seq++) {
        insert.run(Object.values(makeRow(options.merchantId, options.mode, seq, oldest + (seq - 1) * ROW_SPACING_MS)));
      }
      setCounter.run(options.merchantId, options.mode, counter, options.rows);
      // Every seeded payment succeeded: the per-status count that `?status=` lists read.
      if (options.list === 'transactions') setCounter.run(options.merchantId, options.mode, 'transactions:succeeded', options.rows);
    })();
  } finally {
    db.close();
  }
  return { rows: options.rows, seconds: Number(process.hrtime.bigint() - started) / 1e9 };
}


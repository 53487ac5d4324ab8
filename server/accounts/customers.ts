import { randomUUID } from 'node:crypto';
import { isUuid, newIdentity } from '../../shared/ids.js';
import { toIsoTimestamp, type Clock } from '../../shared/time.js';
import type { CustomersTable } from '../db/schema.js';
import type { FieldCipher } from '../db/encryption.js';
import { findScoped } from '../db/prepared.js';
import type { Executor, Store } from '../db/store.js';
import { notFound } from '../errors.js';
import { fromProcessorError } from '../processor/errors.js';
import { type CustomerFields, type CustomersPort, processorIdempotencyKey } from '../processor/port.js';
import type { Customer, CreateCustomerInput, DeletedCustomer, UpdateCustomerInput } from '../../shared/contract/customers.js';
import { addToCounter, nextSeq, readCount } from '../db/counters.js';
import { type Page, type PageRequest, seqPage, toPage } from '../pagination.js';
import { recordEvent } from '../webhooks/outbox.js';
import type { Scope } from './scope.js';

/** A customer's details as stored: sealed (server/db/encryption.ts). */
type Details = Pick<CustomersTable, 'name' | 'email' | 'phone'>;

function openDetails(cipher: FieldCipher, row: CustomersTable): Details {
  return { name: cipher.open('customers.name', row.id, row.name), email: cipher.open('customers.email', row.id, row.email), phone: cipher.open('customers.phone', row.id, row.phone) };
}

function sealDetails(cipher: FieldCipher, id: string, details: Details): Details {
  return { name: cipher.seal('customers.name', id, details.name), email: cipher.seal('customers.email', id, details.email), phone: cipher.seal('customers.phone', id, details.phone) };
}

/** A stored customer row as the API shows it, its details opened. */
export function presentCustomer(row: CustomersTable, cipher: FieldCipher): Customer {
  return presentOpened(row, openDetails(cipher, row));
}

function presentOpened(row: CustomersTable, details: Details): Customer {
  return {
    id: row.id,
    reference: row.reference,
    object: 'customer',
    name: details.name,
    email: details.email,
    phone: details.phone,
    description: row.description,
    metadata: JSON.parse(row.metadata) as Record<string, string>,
    is_test: row.mode === 'test',
    created_at: toIsoTimestamp(row.created_at),
    updated_at: toIsoTimestamp(row.updated_at),
  };
}

/**
 * Finds a live (not deleted) customer by uuid or `cus_` reference inside the scope; anything else,
 * a deleted customer included, is undefined.
 */
export async function findCustomerRow(db: Executor, scope: Scope, idOrReference: string): Promise<CustomersTable | undefined> {
  const row = await findScoped(db, 'customers', scope, isUuid(idOrReference) ? 'id' : 'reference', idOrReference);
  return row && row.deleted_at === null ? row : undefined;
}

/** The fields the processor keeps of a customer: its contact details, not the merchant's metadata. */
function processorFields(input: CreateCustomerInput | UpdateCustomerInput): CustomerFields {
  const fields: CustomerFields = {};
  for (const key of ['name', 'email', 'phone', 'description'] as const) if (input[key] !== undefined) fields[key] = input[key];
  return fields;
}

/**
 * Customers (docs/api-choices.md). Each is mirrored on the processor, where payments naming it are
 * made: the processor's copy is written first, then ours with its event in one transaction, so a
 * customer we show always exists there. A deleted customer keeps its row (its payments name it)
 * and is found by nothing.
 */
export class CustomerService {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly processor: CustomersPort,
    private readonly cipher: FieldCipher,
  ) {}

  async create(scope: Scope, input: CreateCustomerInput): Promise<Customer> {
    const { id, reference } = newIdentity('customer');
    let processorId: string;
    try {
      const mirrored = await this.processor.createCustomer(
        scope,
        { ...processorFields(input), metadata: { pos_customer_id: id, pos_merchant_id: scope.merchantId } },
        processorIdempotencyKey(scope.merchantId, scope.mode, id, 'create_customer'),
      );
      processorId = mirrored.id;
    } catch (err) {
      throw fromProcessorError(err);
    }
    const details: Details = { name: input.name ?? null, email: input.email ?? null, phone: input.phone ?? null };
    const row = await this.store.transaction(async (trx) => {
      const now = this.clock.now();
      const seq = await nextSeq(trx, scope.merchantId, scope.mode, 'customers');
      const values: CustomersTable = {
        id,
        reference,
        merchant_id: scope.merchantId,
        mode: scope.mode,
        ...sealDetails(this.cipher, id, details),
        description: input.description ?? null,
        metadata: JSON.stringify(input.metadata ?? {}),
        created_at: now,
        updated_at: now,
        seq,
        processor_customer_id: processorId,
        deleted_at: null,
      };
      await trx.insertInto('customers').values(values).execute();
      await recordEvent(trx, scope, 'customer.created', id, presentOpened(values, details), now, { seal: this.cipher });
      return values;
    });
    return presentOpened(row, details);
  }

  async get(scope: Scope, idOrReference: string): Promise<Customer> {
    return presentCustomer(await this.#row(scope, idOrReference), this.cipher);
  }

  async update(scope: Scope, idOrReference: string, input: UpdateCustomerInput): Promise<Customer> {
    const found = await this.#row(scope, idOrReference);
    const fields = processorFields(input);
    const processorId = found.processor_customer_id;
    if (processorId && Object.keys(fields).length > 0) {
      try {
        // A fresh key per request: the SDK's own retries reuse it, while a later update with the
        // same fields (after another changed them) must apply again, not replay the first.
        await this.processor.updateCustomer(scope, processorId, fields, processorIdempotencyKey(scope.merchantId, scope.mode, found.id, 'update_customer', randomUUID()));
      } catch (err) {
        throw fromProcessorError(err);
      }
    }
    const row = await this.store.transaction(async (trx) => {
      const current = await findCustomerRow(trx, scope, found.id);
      if (!current) throw notFound('id', 'customer');
      const now = this.clock.now();
      const was = openDetails(this.cipher, current);
      const details: Details = {
        name: input.name === undefined ? was.name : input.name,
        email: input.email === undefined ? was.email : input.email,
        phone: input.phone === undefined ? was.phone : input.phone,
      };
      const description = input.description === undefined ? current.description : input.description;
      // Stripe merges metadata keys; an empty string value removes a key.
      const metadata = JSON.stringify(mergeMetadata(JSON.parse(current.metadata) as Record<string, string>, input.metadata));
      // Nothing changed: no write and no event, as Stripe sends no customer.updated then.
      if ((['name', 'email', 'phone'] as const).every((k) => details[k] === was[k]) && description === current.description && metadata === current.metadata) return { row: current, details: was };
      const next: CustomersTable = { ...current, ...sealDetails(this.cipher, current.id, details), description, metadata, updated_at: now };
      await trx
        .updateTable('customers')
        .set({ name: next.name, email: next.email, phone: next.phone, description: next.description, metadata: next.metadata, updated_at: next.updated_at })
        .where('id', '=', current.id)
        .execute();
      await recordEvent(trx, scope, 'customer.updated', current.id, presentOpened(next, details), now, { seal: this.cipher });
      return { row: next, details };
    });
    return presentOpened(row.row, row.details);
  }

  /** Deletes the customer here and on the processor; afterwards it is 404 and no new payment may name it. */
  async delete(scope: Scope, idOrReference: string): Promise<DeletedCustomer> {
    const found = await this.#row(scope, idOrReference);
    const processorId = found.processor_customer_id;
    if (processorId) {
      try {
        await this.processor.deleteCustomer(scope, processorId);
      } catch (err) {
        throw fromProcessorError(err);
      }
    }
    await this.store.transaction(async (trx) => {
      const now = this.clock.now();
      // Guarded on the row still being live: of two deletes racing, one records the event.
      const deleted = await trx.updateTable('customers').set({ deleted_at: now, updated_at: now }).where('id', '=', found.id).where('deleted_at', 'is', null).executeTakeFirst();
      if (Number(deleted.numUpdatedRows) !== 1) return;
      await addToCounter(trx, scope.merchantId, scope.mode, 'customers:deleted', 1);
      await recordEvent(trx, scope, 'customer.deleted', found.id, { ...presentCustomer({ ...found, updated_at: now }, this.cipher), deleted: true }, now, { seal: this.cipher });
    });
    return { id: found.id, object: 'customer', deleted: true };
  }

  /**
   * Newest first. While a merchant has never deleted a customer the page is an index range on
   * `seq` (the same cost at any depth); once one is deleted, the live ones are paged with OFFSET.
   */
  async list(scope: Scope, request: PageRequest): Promise<Page<Customer>> {
    const db = this.store.db;
    const deleted = await readCount(db, scope.merchantId, scope.mode, 'customers:deleted');
    const present = (row: CustomersTable) => presentCustomer(row, this.cipher);
    if (deleted === 0) return seqPage(db, 'customers', scope, request, present);
    const total = (await readCount(db, scope.merchantId, scope.mode, 'customers')) - deleted;
    const rows = await db
      .selectFrom('customers')
      .selectAll()
      .where('merchant_id', '=', scope.merchantId)
      .where('mode', '=', scope.mode)
      .where('deleted_at', 'is', null)
      .orderBy('seq', 'desc')
      .limit(request.size)
      .offset((request.page - 1) * request.size)
      .execute();
    return toPage(rows.map(present), total, request);
  }

  async #row(scope: Scope, idOrReference: string): Promise<CustomersTable> {
    const row = await findCustomerRow(this.store.db, scope, idOrReference);
    if (!row) throw notFound('id', 'customer');
    return row;
  }
}

export function mergeMetadata(current: Record<string, string>, update: Record<string, string> | undefined): Record<string, string> {
  if (!update) return current;
  const merged = { ...current };
  for (const [key, value] of Object.entries(update)) {
    if (value === '') delete merged[key];
    else merged[key] = value;
  }
  return merged;
}

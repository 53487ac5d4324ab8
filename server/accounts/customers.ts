import { isUuid, newIdentity } from '../../shared/ids.js';
import { toIsoTimestamp, type Clock } from '../../shared/time.js';
import type { CustomersTable } from '../db/schema.js';
import { findScoped } from '../db/prepared.js';
import type { Executor, Store } from '../db/store.js';
import { notFound } from '../errors.js';
import type { Customer, CreateCustomerInput, UpdateCustomerInput } from '../schemas/customers.js';
import { nextSeq } from '../db/counters.js';
import { type Page, type PageRequest, seqPage } from '../pagination.js';
import type { Scope } from './scope.js';

function present(row: CustomersTable): Customer {
  return {
    id: row.id,
    reference: row.reference,
    object: 'customer',
    name: row.name,
    email: row.email,
    phone: row.phone,
    description: row.description,
    metadata: JSON.parse(row.metadata) as Record<string, string>,
    is_test: row.mode === 'test',
    created_at: toIsoTimestamp(row.created_at),
    updated_at: toIsoTimestamp(row.updated_at),
  };
}

/** Finds a customer by uuid or `cus_` reference inside the scope; anything else is a 404. */
export async function findCustomerRow(db: Executor, scope: Scope, idOrReference: string): Promise<CustomersTable | undefined> {
  return findScoped(db, 'customers', scope, isUuid(idOrReference) ? 'id' : 'reference', idOrReference);
}

export class CustomerService {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
  ) {}

  async create(scope: Scope, input: CreateCustomerInput): Promise<Customer> {
    const now = this.clock.now();
    const { id, reference } = newIdentity('customer');
    const row = await this.store.transaction(async (trx) => {
      const seq = await nextSeq(trx, scope.merchantId, scope.mode, 'customers');
      const values: CustomersTable = {
        id,
        reference,
        merchant_id: scope.merchantId,
        mode: scope.mode,
        name: input.name ?? null,
        email: input.email ?? null,
        phone: input.phone ?? null,
        description: input.description ?? null,
        metadata: JSON.stringify(input.metadata ?? {}),
        created_at: now,
        updated_at: now,
        seq,
      };
      await trx.insertInto('customers').values(values).execute();
      return values;
    });
    return present(row);
  }

  async get(scope: Scope, idOrReference: string): Promise<Customer> {
    const row = await findCustomerRow(this.store.db, scope, idOrReference);
    if (!row) throw notFound('id', 'customer');
    return present(row);
  }

  async update(scope: Scope, idOrReference: string, input: UpdateCustomerInput): Promise<Customer> {
    const row = await this.store.transaction(async (trx) => {
      const current = await findCustomerRow(trx, scope, idOrReference);
      if (!current) throw notFound('id', 'customer');
      const next: CustomersTable = {
        ...current,
        name: input.name === undefined ? current.name : input.name,
        email: input.email === undefined ? current.email : input.email,
        phone: input.phone === undefined ? current.phone : input.phone,
        description: input.description === undefined ? current.description : input.description,
        // Stripe merges metadata keys; an empty string value removes a key.
        metadata: JSON.stringify(mergeMetadata(JSON.parse(current.metadata) as Record<string, string>, input.metadata)),
        updated_at: this.clock.now(),
      };
      await trx
        .updateTable('customers')
        .set({ name: next.name, email: next.email, phone: next.phone, description: next.description, metadata: next.metadata, updated_at: next.updated_at })
        .where('id', '=', current.id)
        .execute();
      return next;
    });
    return present(row);
  }

  list(scope: Scope, request: PageRequest): Promise<Page<Customer>> {
    return seqPage(this.store.db, 'customers', scope, request, present);
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

import { ListQuerySchema, listEnvelope, MetadataSchema, TimestampSchema } from './common.js';
import { z } from './zod.js';

const fields = {
  name: z.string().max(256),
  email: z.email().max(512),
  phone: z.string().max(32),
  description: z.string().max(1000),
  metadata: MetadataSchema,
};

export const CreateCustomerSchema = z
  .object({
    name: fields.name.optional(),
    email: fields.email.optional(),
    phone: fields.phone.optional(),
    description: fields.description.optional(),
    metadata: fields.metadata.optional(),
  })
  .strict()
  .openapi('CreateCustomer');

/** An update sets what it names; null clears a field. */
export const UpdateCustomerSchema = z
  .object({
    name: fields.name.nullable().optional(),
    email: fields.email.nullable().optional(),
    phone: fields.phone.nullable().optional(),
    description: fields.description.nullable().optional(),
    metadata: fields.metadata.optional(),
  })
  .strict()
  .openapi('UpdateCustomer');

export const CustomerSchema = z
  .object({
    id: z.uuid(),
    reference: z.string().openapi({ example: 'cus_8fQk2n0aZ1bC3dE4fG5h' }),
    object: z.literal('customer'),
    name: z.string().nullable(),
    email: z.string().nullable(),
    phone: z.string().nullable(),
    description: z.string().nullable(),
    metadata: z.record(z.string(), z.string()),
    is_test: z.boolean(),
    created_at: TimestampSchema,
    updated_at: TimestampSchema,
  })
  .openapi('Customer');

export const DeletedCustomerSchema = z
  .object({ id: z.uuid(), object: z.literal('customer'), deleted: z.literal(true) })
  .openapi('DeletedCustomer');

export const CustomerListQuerySchema = ListQuerySchema;
export const CustomerListSchema = listEnvelope(CustomerSchema, 'CustomerList');

export type CreateCustomerInput = z.infer<typeof CreateCustomerSchema>;
export type UpdateCustomerInput = z.infer<typeof UpdateCustomerSchema>;
export type Customer = z.infer<typeof CustomerSchema>;
export type DeletedCustomer = z.infer<typeof DeletedCustomerSchema>;

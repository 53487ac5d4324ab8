import { EVENT_TYPES, type EventType } from '../webhooks/outbox.js';
import type { KeyKind } from './api-keys.js';
import type { Permission } from '../../shared/contract/permissions.js';
import { grants } from './permissions.js';

/**
 * What a key may read, it may read everywhere, and nothing more: an object's fields reach a
 * restricted key through the event log, the live stream, the agent's pushes and other objects'
 * answers only where its own route would show them to that key. One rule, applied here, for every
 * place those fields travel.
 */

/** Who is reading: a key's kind and, for a restricted key, its permissions. */
export interface Reader {
  kind: KeyKind;
  permissions: ReadonlySet<string>;
}

type EventFamily = EventType extends infer T ? (T extends `${infer F}.${string}` ? F : never) : never;

/**
 * The permission that reads the object each family of events is about: the `read` of the
 * resource its own routes belong to. Keyed by every family in EVENT_TYPES, so a new family does
 * not compile until it says who may see it.
 */
const FAMILY_PERMISSION: Record<EventFamily, Permission> = {
  payment: 'transactions:read',
  refund: 'refunds:read',
  dispute: 'disputes:read',
  payout: 'payouts:read',
  customer: 'customers:read',
  merchant: 'merchant:read',
  terminal: 'terminal:read',
  webhook_endpoint: 'webhooks:read',
};

/** The permission a restricted key needs to see events of `type` (besides `events:read` for the event routes themselves). */
export function eventReadPermission(type: EventType): Permission {
  return FAMILY_PERMISSION[type.slice(0, type.indexOf('.')) as EventFamily];
}

/**
 * Whether the key sees every event and every field whatever its other permissions: a secret key,
 * or a key holding `webhooks:write`, which can point an endpoint at any URL and receive every
 * event there in full (as on Stripe). Hiding from its event log what its endpoints are sent
 * anyway would only pretend.
 */
function readsAllEvents(reader: Reader): boolean {
  return reader.kind === 'secret' || grants(reader.permissions, 'webhooks:write');
}

/** The event types the key may see, or `all` (secret keys, `webhooks:write`); listed, retrieved and streamed alike. */
export function visibleEventTypes(reader: Reader): readonly EventType[] | 'all' {
  if (readsAllEvents(reader)) return 'all';
  return EVENT_TYPES.filter((type) => grants(reader.permissions, eventReadPermission(type)));
}

/**
 * The permission the key lacks to see events of `type`, when it is a type of the catalogue it may
 * not see: asking the list for exactly that type is then a 403 naming it, as the object's own
 * route would answer, rather than an empty page that reads as "none happened".
 */
export function missingEventPermission(reader: Reader, type: string): Permission | undefined {
  if (readsAllEvents(reader) || !(EVENT_TYPES as readonly string[]).includes(type)) return undefined;
  const needed = eventReadPermission(type as EventType);
  return grants(reader.permissions, needed) ? undefined : needed;
}

/**
 * Whether the key reads customers' personal data: the customer objects themselves and the payer's
 * contact details other objects carry (below). `customers:read` does; so do the keys that read
 * every event (`customer.*` events carry it all).
 */
export function readsCustomerData(reader: Reader): boolean {
  return readsAllEvents(reader) || grants(reader.permissions, 'customers:read');
}

/**
 * The fields of other objects that are a customer's personal data, by the object's `object`: the
 * email a payment's receipt goes to (a payment link's payer types it on the hosted page), and what
 * a checkout session or payment link was prefilled with or collected from the payer. They are shown
 * as null to a key without customers:read. A dispute's evidence is the merchant's own case and goes
 * with `disputes:read`.
 */
const CUSTOMER_FIELDS: Readonly<Record<string, readonly string[]>> = {
  transaction: ['receipt_email'],
  'checkout.session': ['customer_email', 'customer_name', 'customer_details'],
  payment_link: ['customer_email'],
};

/** `value` (an answer, an event, a push) with the customer fields of every object in it nulled; copies only what it changes. */
export function withoutCustomerData<T>(value: T): T {
  return strip(value) as T;
}

function strip(value: unknown): unknown {
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    value.forEach((item, i) => {
      const stripped = strip(item);
      if (stripped !== item) (copy ??= [...value])[i] = stripped;
    });
    return copy ?? value;
  }
  if (value === null || typeof value !== 'object') return value;
  const record = value as Record<string, unknown>;
  let copy: Record<string, unknown> | undefined;
  const hidden = typeof record.object === 'string' ? CUSTOMER_FIELDS[record.object] : undefined;
  for (const [key, field] of Object.entries(record)) {
    const next = hidden?.includes(key) && field !== null ? null : strip(field);
    if (next !== field) (copy ??= { ...record })[key] = next;
  }
  return copy ?? value;
}

/** `value` as the key may see it: unchanged for keys that read customers' data. */
export function shownTo<T>(reader: Reader, value: T): T {
  return readsCustomerData(reader) ? value : withoutCustomerData(value);
}

import { describe, expect, it } from 'vitest';
import { EVENT_TYPES } from '../webhooks/outbox.js';
import { isPermission } from '../../shared/contract/permissions.js';
import { eventReadPermission, shownTo, visibleEventTypes, withoutCustomerData } from './visibility.js';

describe('event visibility', () => {
  it('names a read permission for every event type of the catalogue', () => {
    for (const type of EVENT_TYPES) {
      const permission = eventReadPermission(type);
      expect(isPermission(permission) && permission.endsWith(':read'), type).toBe(true);
    }
  });

  it('lets a write include its read, and webhooks:write see every event', () => {
    expect(visibleEventTypes({ kind: 'restricted', permissions: new Set(['customers:write']) })).toEqual(EVENT_TYPES.filter((t) => t.startsWith('customer.')));
    expect(visibleEventTypes({ kind: 'restricted', permissions: new Set(['webhooks:write']) })).toBe('all');
    // webhooks:read reads endpoints, and so the news of one disabled.
    expect(visibleEventTypes({ kind: 'restricted', permissions: new Set(['webhooks:read']) })).toEqual(['webhook_endpoint.disabled']);
    expect(visibleEventTypes({ kind: 'secret', permissions: new Set() })).toBe('all');
  });
});

describe('customers’ fields in other objects', () => {
  const answer = {
    data: [
      { object: 'transaction', id: 't1', receipt_email: 'a@example.com', metadata: { receipt_email: 'kept: not a transaction' } },
      { object: 'event', data: { object: 'checkout.session', customer_email: 'b@example.com', customer_name: 'B', customer_details: { email: 'b@example.com' }, amount: 100 } },
      { object: 'customer', email: 'c@example.com' },
    ],
  };

  it('nulls them in nested objects and lists, and leaves the rest', () => {
    expect(withoutCustomerData(answer)).toEqual({
      data: [
        { object: 'transaction', id: 't1', receipt_email: null, metadata: { receipt_email: 'kept: not a transaction' } },
        { object: 'event', data: { object: 'checkout.session', customer_email: null, customer_name: null, customer_details: null, amount: 100 } },
        { object: 'customer', email: 'c@example.com' },
      ],
    });
  });

  it('never changes what it was given, and returns it as is when nothing is hidden', () => {
    const before = JSON.stringify(answer);
    withoutCustomerData(answer);
    expect(JSON.stringify(answer)).toBe(before);
    const plain = { data: [{ object: 'payout', id: 'po_1' }] };
    expect(withoutCustomerData(plain)).toBe(plain);
    expect(shownTo({ kind: 'restricted', permissions: new Set(['customers:read']) }, answer)).toBe(answer);
  });
});

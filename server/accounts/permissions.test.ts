import { describe, expect, it } from 'vitest';
import { isPermission, PERMISSIONS, PRESETS, type Permission } from '../../shared/contract/permissions.js';
import { grants, missingPermission, normalizePermissions } from './permissions.js';

describe('permissions', () => {
  it('are <resource>:read or <resource>:write, with no write for events', () => {
    for (const p of PERMISSIONS) expect(p).toMatch(/^[a-z_]+:(read|write)$/);
    expect(isPermission('refunds:write')).toBe(true);
    expect(isPermission('events:write')).toBe(false);
    expect(isPermission('refunds:delete')).toBe(false);
    expect(isPermission('secret')).toBe(false);
  });

  it('let write include read, never the other way round', () => {
    const held = new Set<string>(['customers:write', 'events:read']);
    expect(grants(held, 'customers:read')).toBe(true);
    expect(grants(held, 'customers:write')).toBe(true);
    expect(grants(held, 'events:read')).toBe(true);
    expect(grants(new Set(['customers:read']), 'customers:write')).toBe(false);
    expect(grants(new Set(['transactions:write']), 'refunds:write')).toBe(false);
  });

  it('name the first permission missing from a list', () => {
    const held = new Set<string>(['terminal:write']);
    expect(missingPermission(held, 'terminal:read')).toBeUndefined();
    expect(missingPermission(held, ['terminal:write', 'transactions:read'])).toBe('transactions:read');
    expect(missingPermission(new Set(), 'refunds:write')).toBe('refunds:write');
  });

  it('normalize to the table order without duplicates or reads their writes include', () => {
    expect(normalizePermissions(['events:read', 'customers:read', 'customers:write', 'events:read', 'transactions:read'])).toEqual(['transactions:read', 'customers:write', 'events:read']);
  });

  it('presets hold only real permissions; the counter cannot refund, pay out, or touch customers and webhooks', () => {
    for (const list of Object.values(PRESETS)) for (const p of list) expect(isPermission(p), p).toBe(true);
    const counter = new Set<string>(PRESETS.counter);
    for (const p of ['refunds:write', 'payouts:write', 'payouts:read', 'customers:read', 'webhooks:read', 'disputes:read', 'merchant:write'] as Permission[]) expect(grants(counter, p), p).toBe(false);
    const reporting = new Set<string>(PRESETS.reporting);
    expect(PERMISSIONS.filter((p) => p.endsWith(':write')).some((p) => grants(reporting, p))).toBe(false);
    expect(PERMISSIONS.filter((p) => p.endsWith(':read')).every((p) => grants(reporting, p))).toBe(true);
  });
});

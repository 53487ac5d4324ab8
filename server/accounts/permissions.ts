import { PERMISSIONS, type Permission } from '../../shared/contract/permissions.js';

/**
 * How the server applies the permission names of the contract (shared/contract/permissions.ts):
 * a key's stored list, and whether what it holds covers what a route needs.
 */

/**
 * What a route needs: one permission, several (all of them), or `secret` for what only the
 * merchant's secret key may do (managing keys: a restricted key never mints or sees keys).
 */
export type RouteScope = Permission | readonly Permission[] | 'secret';

/** Sorted, without duplicates, and without a `read` that its `write` already includes. */
export function normalizePermissions(permissions: Iterable<Permission>): Permission[] {
  const all = new Set(permissions);
  const kept = [...all].filter((p) => !(p.endsWith(':read') && all.has(p.replace(/:read$/, ':write') as Permission)));
  return kept.sort((a, b) => PERMISSIONS.indexOf(a) - PERMISSIONS.indexOf(b));
}

/** Whether a key holding `held` may use something needing `needed` (`write` includes `read`). */
export function grants(held: ReadonlySet<string>, needed: Permission): boolean {
  if (held.has(needed)) return true;
  return needed.endsWith(':read') && held.has(needed.slice(0, -'read'.length) + 'write');
}

/** The first permission of `scope` that `held` lacks, or undefined when it has them all. */
export function missingPermission(held: ReadonlySet<string>, scope: Permission | readonly Permission[]): Permission | undefined {
  const needed: readonly Permission[] = typeof scope === 'string' ? [scope] : scope;
  return needed.find((p) => !grants(held, p));
}

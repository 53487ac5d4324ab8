import type { RouteScope } from '../accounts/permissions.js';
import type { RouteDoc } from '../openapi.js';

/** Finds the scope a request needs from the route docs; undefined for a request no route documents. */
export type ScopeLookup = (method: string, path: string) => RouteScope | undefined;

interface Entry {
  method: string;
  pattern: RegExp;
  params: number;
  scope: RouteScope;
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Compiles the documented routes into matchers: `{id}` matches one path segment, a trailing slash
 * and letter case are ignored (Express routes the same way), and HEAD is answered by GET routes.
 * Literal routes are tried before parameterised ones (`/v1/events/stream` before `/v1/events/{id}`).
 */
export function routeScopes(docs: readonly RouteDoc[]): ScopeLookup {
  const entries: Entry[] = docs.map((doc) => {
    const parts = doc.path.split(/(\{[^}]+\})/).map((part) => (part.startsWith('{') ? '[^/]+' : escape(part)));
    return { method: doc.method.toUpperCase(), pattern: new RegExp(`^${parts.join('')}/?$`, 'i'), params: (doc.path.match(/\{/g) ?? []).length, scope: doc.scope };
  });
  entries.sort((a, b) => a.params - b.params);
  return (method, path) => {
    const m = method === 'HEAD' ? 'GET' : method;
    return entries.find((e) => e.method === m && e.pattern.test(path))?.scope;
  };
}

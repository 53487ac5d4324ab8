import type { RouteScope } from '../accounts/permissions.js';
import type { RouteDoc } from '../openapi.js';

/** Finds the scope a request needs from the route docs; undefined for a request no route documents. */
export type ScopeLookup = (method: string, path: string) => RouteScope | undefined;

/** The documented route a request is for, with its path parameters in order (decoded). */
export interface RouteMatch {
  doc: RouteDoc;
  params: string[];
}

export type RouteMatcher = (method: string, path: string) => RouteMatch | undefined;

interface Entry {
  method: string;
  pattern: RegExp;
  params: number;
  doc: RouteDoc;
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function decoded(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/**
 * Compiles the documented routes into matchers: `{id}` matches one path segment, a trailing slash
 * and letter case are ignored (Express routes the same way), and HEAD is answered by GET routes.
 * Literal routes are tried before parameterised ones (`/v1/events/stream` before `/v1/events/{id}`).
 */
export function routeMatcher(docs: readonly RouteDoc[]): RouteMatcher {
  const entries: Entry[] = docs.map((doc) => {
    const parts = doc.path.split(/(\{[^}]+\})/).map((part) => (part.startsWith('{') ? '([^/]+)' : escape(part)));
    return { method: doc.method.toUpperCase(), pattern: new RegExp(`^${parts.join('')}/?$`, 'i'), params: (doc.path.match(/\{/g) ?? []).length, doc };
  });
  entries.sort((a, b) => a.params - b.params);
  return (method, path) => {
    const m = method === 'HEAD' ? 'GET' : method;
    for (const entry of entries) {
      if (entry.method !== m) continue;
      const found = entry.pattern.exec(path);
      if (found) return { doc: entry.doc, params: found.slice(1).map(decoded) };
    }
    return undefined;
  };
}

export function routeScopes(docs: readonly RouteDoc[]): ScopeLookup {
  const match = routeMatcher(docs);
  return (method, path) => match(method, path)?.doc.scope;
}

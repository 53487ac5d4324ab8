import type { Response } from 'express';
import { readsCustomerData, withoutCustomerData } from '../accounts/visibility.js';

/**
 * Writes a JSON answer. Express's `res.json` goes through `res.send`, which parses the content
 * type back, converts the text to a Buffer and checks ETag freshness (ETags are off here); on a
 * GET that was ~5 % of the request. Same headers, same bytes; Node leaves the body out for HEAD.
 */
export function sendJson(res: Response, status: number, body: unknown): void {
  writeJson(res, status, hidesCustomerData(res) ? JSON.stringify(withoutCustomerData(body)) : JSON.stringify(body));
}

/**
 * The same for a body that is JSON text already (a stored idempotent response): stored whole, it is
 * shown to each caller as its key may see it (server/accounts/visibility.ts), as `sendJson` does.
 */
export function sendJsonText(res: Response, status: number, text: string): void {
  writeJson(res, status, hidesCustomerData(res) ? JSON.stringify(withoutCustomerData(JSON.parse(text))) : text);
}

function hidesCustomerData(res: Response): boolean {
  const principal = res.req.principal;
  return principal !== undefined && !readsCustomerData(principal);
}

function writeJson(res: Response, status: number, text: string): void {
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}

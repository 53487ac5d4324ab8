import type { Response } from 'express';

/**
 * Writes a JSON answer. Express's `res.json` goes through `res.send`, which parses the content
 * type back, converts the text to a Buffer and checks ETag freshness (ETags are off here); on a
 * GET that was ~5 % of the request. Same headers, same bytes; Node leaves the body out for HEAD.
 */
export function sendJson(res: Response, status: number, body: unknown): void {
  sendJsonText(res, status, JSON.stringify(body));
}

/** The same for a body that is JSON text already (a stored idempotent response). */
export function sendJsonText(res: Response, status: number, text: string): void {
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}

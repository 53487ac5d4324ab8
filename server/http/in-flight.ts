import type { Express, Request, RequestHandler, Response } from 'express';
import './types.js';

/**
 * The requests whose work is not over, so a stopping server closes its store only after them.
 * Closing the listening socket waits for connections, not for handlers: a client that gives up
 * mid-request closes its connection while its handler still runs (a processor call, then the
 * transaction that records its answer), and a store closed under it fails that transaction.
 *
 * A request counts from its arrival until its answer is ended (after anything holding the answer
 * back, such as the audit entry written before it goes out), or, when its client went first, until
 * the route's handler has settled. A request whose client left before any handler started (still
 * in a middleware) stops counting when the client leaves.
 */
export class InFlight {
  #count = 0;
  #idle: (() => void)[] = [];

  get count(): number {
    return this.#count;
  }

  /**
   * Counts every request of `app`: patches its responses' `end` and returns the middleware that
   * starts the count, for the app to run before any middleware that answers.
   */
  attach(app: Express): RequestHandler {
    const response = app.response as Response;
    const end = response.end as (this: Response, chunk?: unknown, encoding?: unknown, cb?: unknown) => Response;
    const leave = (req: Request): void => this.#leave(req);
    // Once on the app's response prototype, as timeResponses does: no closure per request. The
    // arguments are passed on as they came, without collecting them into an array.
    response.end = function (this: Response, chunk?: unknown, encoding?: unknown, cb?: unknown) {
      const result = end.call(this, chunk, encoding, cb);
      leave(this.req);
      return result;
    } as Response['end'];
    // `close` comes once per response: a plain listener shared by all of them, not a `once` wrapper each.
    const clientLeft = function (this: Response): void {
      if (this.writableEnded) return;
      const req = this.req;
      const done = () => leave(req);
      void Promise.resolve(req.handling).then(done, done);
    };
    return (req, res, next) => {
      req.counted = true;
      this.#count += 1;
      res.on('close', clientLeft);
      next();
    };
  }

  /** Resolves true once no request is in flight, or false after `timeoutMs` with some still running. */
  idle(timeoutMs: number): Promise<boolean> {
    if (this.#count === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(() => {
        this.#idle = this.#idle.filter((waiter) => waiter !== done);
        resolve(false);
      }, timeoutMs);
      this.#idle.push(done);
    });
  }

  #leave(req: Request): void {
    if (!req.counted) return;
    req.counted = false;
    this.#count -= 1;
    if (this.#count > 0) return;
    const waiters = this.#idle;
    this.#idle = [];
    for (const waiter of waiters) waiter();
  }
}

/** The route's handler for `req` is `work` (server/http/route-table.ts): a request whose client left counts until it settles. */
export function handling<T>(req: Request, work: T): T {
  if (work instanceof Promise) req.handling = work;
  return work;
}

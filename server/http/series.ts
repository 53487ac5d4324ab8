import type { NextFunction, Request, RequestHandler, Response } from 'express';

/**
 * Middleware run one after another as a single Express layer. Express walks each layer it holds
 * with a path match, a parsed URL and a params object on every request; the layers every request
 * passes in a row (counting, context, probes, the /v1 entry) need none of that. Errors behave as
 * Express treats a layer's: one passed to `next`, thrown, or a rejected promise returned goes to
 * the error handlers, and the rest of the series is skipped.
 */
export function series(...handlers: RequestHandler[]): RequestHandler {
  if (handlers.length === 1) return handlers[0]!;
  return (req: Request, res: Response, next: NextFunction) => {
    let index = 0;
    const step = (err?: unknown): void => {
      if (err) return next(err);
      if (index === handlers.length) return next();
      const handler = handlers[index++]!;
      try {
        const result: unknown = handler(req, res, step);
        if (result instanceof Promise) result.then(undefined, (error: unknown) => next(error ?? new Error('Rejected promise')));
      } catch (error) {
        next(error);
      }
    };
    step();
  };
}

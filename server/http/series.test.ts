import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express, { type ErrorRequestHandler, type RequestHandler, type Response } from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { series } from './series.js';

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
});

/** What ran before, kept on the response's locals. */
const ranOf = (res: Response): string[] => ((res.locals.ran as string[] | undefined) ??= []);

/** An app running `handlers` as one series, then a route that names what ran, and an error handler that names the error. */
async function serve(...handlers: RequestHandler[]): Promise<(path?: string) => Promise<{ status: number; body: string }>> {
  const app = express();
  app.use(series(...handlers));
  app.get('/', (_req, res) => void res.send(`route after ${ranOf(res).join(',')}`));
  app.use(((err, _req, res, _next) => void res.status(500).send(`error ${err instanceof Error ? err.message : String(err)} after ${ranOf(res).join(',')}`)) as ErrorRequestHandler);
  const listening = app.listen(0, '127.0.0.1');
  servers.push(listening);
  await new Promise<void>((resolve) => listening.once('listening', () => resolve()));
  const url = `http://127.0.0.1:${(listening.address() as AddressInfo).port}`;
  return async (path = '/') => {
    const response = await fetch(`${url}${path}`);
    return { status: response.status, body: await response.text() };
  };
}

const step = (name: string): RequestHandler => (_req, res, next) => {
  ranOf(res).push(name);
  next();
};

/** A step that goes on later, as a body parser does: what follows runs outside Express's own try. */
const later = (name: string): RequestHandler => (_req, res, next) => {
  ranOf(res).push(name);
  setImmediate(next);
};

describe('middleware run as one series', () => {
  it('runs each in order, then what follows the series', async () => {
    const get = await serve(step('a'), later('b'), step('c'));
    expect(await get()).toEqual({ status: 200, body: 'route after a,b,c' });
  });

  it('sends an error passed to next, one thrown and a rejected promise to the error handlers, skipping the rest', async () => {
    const passed = await serve(step('a'), (_req, _res, next) => next(new Error('passed')), step('never'));
    expect(await passed()).toEqual({ status: 500, body: 'error passed after a' });

    const thrown = await serve(later('a'), () => {
      throw new Error('thrown');
    }, step('never'));
    expect(await thrown()).toEqual({ status: 500, body: 'error thrown after a' });

    const rejected = await serve(step('a'), (() => Promise.reject(new Error('rejected'))) as RequestHandler, step('never'));
    expect(await rejected()).toEqual({ status: 500, body: 'error rejected after a' });

    const rejectedEmpty = await serve((() => Promise.reject(undefined)) as RequestHandler);
    expect(await rejectedEmpty()).toEqual({ status: 500, body: 'error Rejected promise after ' });
  });

  it('stops where a handler answers', async () => {
    const get = await serve(step('a'), (_req, res) => void res.status(401).send('refused'), step('never'));
    expect(await get()).toEqual({ status: 401, body: 'refused' });
  });
});

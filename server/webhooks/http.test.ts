import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postWebhook } from './http.js';

let receiver: Server;
let url: string;
let received = 0;
beforeAll(async () => {
  receiver = createServer((req, res) => {
    received += 1;
    // A receiver that drops the connection mid-request.
    if (req.url === '/drop') return void req.socket.destroy();
    // A receiver that never answers.
    if (req.url === '/hang') return void req.resume();
    req.resume();
    req.on('end', () => res.writeHead(204).end());
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', () => resolve()));
  url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
});
afterAll(() => new Promise<void>((resolve) => receiver.close(() => resolve())));

describe('posting a webhook', () => {
  it('judges a URL under the rule it is sent with, though the same URL was sent under another just before', async () => {
    const open = { publicOnly: false, httpsOnly: false };
    const strict = { publicOnly: true, httpsOnly: false };
    expect(await postWebhook(url, {}, '{}', 2_000, open)).toMatchObject({ statusCode: 204, error: null });
    expect(await postWebhook(url, {}, '{}', 2_000, strict)).toMatchObject({ statusCode: null, error: expect.stringMatching(/^url /) });
    expect(await postWebhook(url, {}, '{}', 2_000, { publicOnly: false, httpsOnly: true })).toMatchObject({ statusCode: null, error: expect.stringMatching(/^url /) });
    expect(await postWebhook(url, {}, '{}', 2_000, open)).toMatchObject({ statusCode: 204, error: null });
  });

  it('refuses a URL that does not parse without sending anything, each time it is asked', async () => {
    for (let i = 0; i < 2; i++) expect(await postWebhook('http://[::1', {}, '{}', 2_000, { publicOnly: false, httpsOnly: false })).toMatchObject({ statusCode: null, error: expect.stringMatching(/^url /) });
  });

  it('cuts every request in flight when their signal aborts, and only those', async () => {
    const open = { publicOnly: false, httpsOnly: false };
    const stopping = new AbortController();
    expect(await postWebhook(url, {}, '{}', 2_000, open, stopping.signal)).toMatchObject({ statusCode: 204 });
    const hanging = [1, 2, 3].map(() => postWebhook(url.replace('/hook', '/hang'), {}, '{}', 10_000, open, stopping.signal));
    const other = postWebhook(url.replace('/hook', '/hang'), {}, '{}', 300, open, new AbortController().signal);
    await new Promise((resolve) => setTimeout(resolve, 50));
    stopping.abort();
    for (const result of await Promise.all(hanging)) expect(result).toMatchObject({ statusCode: null, error: 'delivery aborted: server stopping' });
    expect(await other).toMatchObject({ statusCode: null, error: 'timed out after 300 ms' });
  });

  it('sends nothing under a signal that has already aborted', async () => {
    const stopped = new AbortController();
    stopped.abort();
    const before = received;
    expect(await postWebhook(url, {}, '{}', 2_000, { publicOnly: false, httpsOnly: false }, stopped.signal)).toMatchObject({ statusCode: null, error: 'delivery aborted: server stopping' });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(received).toBe(before);
  });

  it('reports a connection the receiver drops as a failed attempt, not a throw', async () => {
    const result = await postWebhook(url.replace('/hook', '/drop'), {}, '{}', 2_000, { publicOnly: false, httpsOnly: false });
    expect(result.statusCode).toBeNull();
    expect(result.error).toBeTruthy();
  });
});

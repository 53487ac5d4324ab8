import http from 'node:http';
import https from 'node:https';
import { urlToHttpOptions } from 'node:url';
import { type EndpointRule, publicOnlyLookup, refuseUrl } from './egress.js';

/** What one POST to an endpoint came to. */
export interface PostResult {
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
  retryAfter?: string | undefined;
}

/**
 * Keep-alive connections make repeated deliveries to one receiver cheap. No per-origin socket cap:
 * the worker already bounds concurrency per endpoint, and a cap here would make two endpoints on
 * one host queue behind each other. Public-only deliveries get agents of their own: a pooled socket
 * is reused by host name, and one opened without the address check (a test endpoint's, to a name
 * that resolved to 127.0.0.1) must never carry a delivery that requires the check.
 */
const agents = {
  open: { 'http:': new http.Agent({ keepAlive: true }), 'https:': new https.Agent({ keepAlive: true }) },
  publicOnly: { 'http:': new http.Agent({ keepAlive: true }), 'https:': new https.Agent({ keepAlive: true }) },
};

/**
 * An endpoint's URL as parsed and judged, by rule and URL: a worker sends to a few endpoints many
 * times, and parsing each URL twice per request is wasted work. The judgement depends only on the
 * URL's text and the rule (a name's addresses are checked at connect time, never cached); past this
 * many URLs the cache simply starts over. An accepted URL keeps the request options it is sent
 * with, all but the headers: given a URL, `http.request` reads every part of it again through the
 * URL's getters on each request.
 */
const JUDGED_URLS = 1_000;
type Judged = { refused: string } | { client: typeof http | typeof https; options: http.RequestOptions };
const judged = new Map<string, Judged>();

function judge(url: string, rule: EndpointRule): Judged {
  const key = `${rule.publicOnly ? 'p' : '-'}${rule.httpsOnly ? 's' : '-'}${url}`;
  let entry = judged.get(key);
  if (!entry) {
    const refused = refuseUrl(url, rule);
    entry = refused ? { refused: refused.why } : accepted(new URL(url), rule);
    if (judged.size >= JUDGED_URLS) judged.clear();
    judged.set(key, entry);
  }
  return entry;
}

function accepted(target: URL, rule: EndpointRule): Judged {
  const protocol = target.protocol as 'http:' | 'https:';
  return {
    client: protocol === 'https:' ? https : http,
    options: {
      ...urlToHttpOptions(target),
      method: 'POST',
      agent: agents[rule.publicOnly ? 'publicOnly' : 'open'][protocol],
      ...(rule.publicOnly ? { lookup: publicOnlyLookup as unknown as typeof import('node:dns').lookup } : {}),
    },
  };
}

/**
 * What cuts each request in flight, by the signal that cuts them all (a worker's, when it stops):
 * one abort listener per signal, where one per request cost an EventTarget registration and
 * removal for every delivery.
 */
const cutters = new WeakMap<AbortSignal, Set<() => void>>();

/** Calls `cut` when `signal` aborts, until the returned function is called. */
function onAbort(signal: AbortSignal, cut: () => void): () => void {
  let cuts = cutters.get(signal);
  if (!cuts) {
    const all = new Set<() => void>();
    signal.addEventListener('abort', () => all.forEach((c) => c()), { once: true });
    cutters.set(signal, all);
    cuts = all;
  }
  cuts.add(cut);
  const registered = cuts;
  return () => void registered.delete(cut);
}

/** An attempt cut, or never started, because the signal it runs under (its worker's) has aborted. */
const STOPPING = 'delivery aborted: server stopping';

/** Longest error text kept per attempt: enough for a message, not for a receiver's HTML page. */
const MAX_ERROR_LENGTH = 300;

function describe(err: unknown, timeoutMs: number, timedOut: boolean): string {
  if (timedOut) return `timed out after ${timeoutMs} ms`;
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ECONNREFUSED') return 'connection refused';
  if (code === 'ECONNRESET') return 'connection reset';
  if (code === 'ENOTFOUND') return 'host not found';
  const message = err instanceof Error ? err.message : String(err);
  return message.slice(0, MAX_ERROR_LENGTH);
}

/**
 * POSTs one signed body, if the endpoint's rule allows its URL: a literal address is checked here,
 * a name at connect time by the public-only lookup. Redirects are not followed (a 3xx is a failure,
 * as on Stripe: the merchant should register the final URL; following one would also reach an
 * address nobody checked). Everything, connection and answer, must happen within `timeoutMs`.
 */
export function postWebhook(url: string, headers: Readonly<Record<string, string>>, body: string, timeoutMs: number, rule: EndpointRule, signal?: AbortSignal): Promise<PostResult> {
  const started = performance.now();
  const elapsed = () => performance.now() - started;
  const judgement = judge(url, rule);
  if ('refused' in judgement) return Promise.resolve({ statusCode: null, latencyMs: 0, error: `url ${judgement.refused}` });
  // An abort listener added now would never be called: the request would go out uncut.
  if (signal?.aborted) return Promise.resolve({ statusCode: null, latencyMs: 0, error: STOPPING });
  const { client, options } = judgement;
  return new Promise<PostResult>((resolve) => {
    let settled = false;
    let timedOut = false;
    const finish = (result: PostResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      forget?.();
      resolve(result);
    };
    const req = client.request({
      ...options,
      headers: { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), 'user-agent': 'pos-webhooks/1' },
    });
    const timer = setTimeout(() => {
      timedOut = true;
      req.destroy(new Error('timeout'));
    }, timeoutMs);
    const forget = signal ? onAbort(signal, () => req.destroy(new Error(STOPPING))) : undefined;
    req.on('response', (res) => {
      const statusCode = res.statusCode ?? null;
      // Only a failure's Retry-After is ever used, and reading `res.headers` builds the whole header
      // object, which a success does not need.
      const retryAfter = statusCode !== null && statusCode >= 200 && statusCode < 300 ? undefined : res.headers['retry-after'];
      // The answer's body is not needed; reading it to the end returns the socket to the pool.
      res.resume();
      res.on('error', () => undefined);
      let error: string | null = null;
      if (statusCode !== null && statusCode >= 300 && statusCode < 400) error = 'redirects are not followed; register the final URL';
      finish({ statusCode, latencyMs: elapsed(), error, retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter });
    });
    req.on('error', (err) => finish({ statusCode: null, latencyMs: elapsed(), error: describe(err, timeoutMs, timedOut) }));
    req.end(body);
  });
}

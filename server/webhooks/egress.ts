import { lookup as dnsLookup, type LookupAddress, type LookupOneOptions } from 'node:dns';
import { isIP } from 'node:net';

/**
 * Where webhook deliveries may go. `any` (the default) suits a shop's on-premise server, whose
 * endpoints are often on the shop's own network; `public` is for a platform deployment, where an
 * endpoint aimed at a private or loopback address would let a merchant probe our network (SSRF).
 */
export type EgressPolicy = 'any' | 'public';

function ipv4Private(ip: string): boolean {
  const [a = 0, b = 0] = ip.split('.').map(Number);
  return (
    a === 0 || // "this" network
    a === 10 ||
    a === 127 ||
    (a === 100 && b >= 64 && b <= 127) || // carrier-grade NAT
    (a === 169 && b === 254) || // link-local, cloud metadata services
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168) ||
    (a === 192 && b === 0) || // IETF protocol assignments
    (a === 198 && (b === 18 || b === 19)) || // benchmarking
    a >= 224 // multicast and reserved
  );
}

/** True for loopback, private, link-local, unique-local and other addresses that are not the public internet. */
export function isPrivateAddress(ip: string): boolean {
  const family = isIP(ip);
  if (family === 4) return ipv4Private(ip);
  if (family !== 6) return true;
  const lower = ip.toLowerCase();
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (mapped?.[1]) return ipv4Private(mapped[1]);
  if (lower === '::' || lower === '::1') return true;
  const first = Number.parseInt(lower.split(':')[0] || '0', 16);
  return (
    (first & 0xfe00) === 0xfc00 || // unique local fc00::/7
    (first & 0xffc0) === 0xfe80 || // link-local fe80::/10
    (first & 0xff00) === 0xff00 // multicast
  );
}

/** Why a URL may not be an endpoint under the policy, or undefined if it may. Checked when it is set. */
export function refuseUrl(raw: string, policy: EgressPolicy): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'is not a valid URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must use http or https';
  if (url.username || url.password) return 'must not contain credentials';
  if (url.hash) return 'must not contain a fragment';
  if (policy === 'any') return undefined;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (host === 'localhost' || host.endsWith('.localhost') || host.endsWith('.local') || host.endsWith('.internal')) {
    return 'must not target a private or loopback address on this server';
  }
  if (isIP(host) && isPrivateAddress(host)) return 'must not target a private or loopback address on this server';
  return undefined;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A DNS lookup for http.request that refuses private answers under the `public` policy. Checking
 * the resolved address at connect time, not only the name when the endpoint was saved, stops DNS
 * rebinding (a public name that later resolves to 127.0.0.1).
 */
export function guardedLookup(policy: EgressPolicy) {
  return (hostname: string, options: LookupOneOptions | { all: true }, callback: LookupCallback): void => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '');
      const list = addresses as LookupAddress[];
      const allowed = policy === 'any' ? list : list.filter((a) => !isPrivateAddress(a.address));
      if (allowed.length === 0) {
        const refused = Object.assign(new Error(`${hostname} resolves only to private or loopback addresses, which this server does not deliver to`), {
          code: 'EGRESS_REFUSED',
        });
        return callback(refused, '');
      }
      if ((options as { all?: boolean }).all) return callback(null, allowed);
      const first = allowed[0] as LookupAddress;
      callback(null, first.address, first.family);
    });
  };
}

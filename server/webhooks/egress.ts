import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import ipaddr from 'ipaddr.js';
import type { Mode } from '../db/schema.js';

/**
 * The server's egress setting (`--webhook-egress`). `any` (the default) lets test-mode endpoints
 * point anywhere, as a developer's receiver on localhost needs; `public` is for a platform
 * deployment, where an endpoint aimed at a private or loopback address would let a merchant probe
 * our network (SSRF), so every endpoint must be a public address.
 */
export type EgressSetting = 'any' | 'public';

export interface EgressOptions {
  egress: EgressSetting;
  /**
   * Live endpoints follow the test-mode rule: for a server whose live mode moves no real money
   * (the simulator behind live keys), where a live receiver on localhost is a legitimate setup.
   */
  liveEndpointsFollowTestRule: boolean;
}

export const DEFAULT_EGRESS: EgressOptions = { egress: 'any', liveEndpointsFollowTestRule: false };

/** What an endpoint's URL must satisfy, when it is set and at every delivery. */
export interface EndpointRule {
  /** Only public internet addresses, for literal hosts and for every address a name resolves to. */
  publicOnly: boolean;
  /** Only `https://`: live events carry real payments and customers' data. */
  httpsOnly: boolean;
}

/**
 * The rule for an endpoint of `mode`. Live endpoints must be public `https://` URLs whatever the
 * egress setting: they carry real money, and no live receiver belongs on our own network. Test
 * endpoints may point anywhere under `any` (local development) and must be public under `public`;
 * plain `http://` stays allowed for them, since the risk `public` guards against is where a request
 * goes, not who can read test data on the way.
 */
export function endpointRule(mode: Mode, options: EgressOptions): EndpointRule {
  if (mode === 'live' && !options.liveEndpointsFollowTestRule) return { publicOnly: true, httpsOnly: true };
  return { publicOnly: options.egress === 'public', httpsOnly: false };
}

/**
 * IANA allocates global unicast IPv6 only from 2000::/3; everything outside it that ipaddr.js
 * still calls `unicast` (the deprecated IPv4-compatible ::/96, unassigned space) is not reachable
 * on the internet, so it is no receiver's address.
 */
const GLOBAL_UNICAST_V6 = ipaddr.IPv6.parseCIDR('2000::/3');

/**
 * IPv6 ranges that carry an IPv4 address inside them: the IPv6 address is as public as the IPv4
 * one(s) it embeds. A DNS64 resolver answers 64:ff9b::8.8.8.8 for a public name, so refusing
 * these ranges outright would stop every delivery on an IPv6-only network.
 */
const EMBEDDING_V6_RANGES = new Set(['ipv4Mapped', 'rfc6145', 'rfc6052', '6to4', 'teredo']);

/** The well-known NAT64 prefix; the rest of ipaddr.js's `rfc6052` range is the /48 of RFC 8215. */
const NAT64_WELL_KNOWN = ipaddr.IPv6.parseCIDR('64:ff9b::/96');

function v4(hi: number, lo: number): ipaddr.IPv4 {
  return new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
}

/** The IPv4 addresses an IPv6 address of an embedding range stands for (RFC 4291, 6052, 6145, 3056, 4380). */
function embeddedIPv4(addr: ipaddr.IPv6, range: string): ipaddr.IPv4[] {
  const [, p1 = 0, p2 = 0, p3 = 0, p4 = 0, p5 = 0, p6 = 0, p7 = 0] = addr.parts;
  switch (range) {
    case 'ipv4Mapped':
    case 'rfc6145':
      return [v4(p6, p7)];
    case 'rfc6052':
      // 64:ff9b::/96 keeps the IPv4 in the last 32 bits; 64:ff9b:1::/48 (RFC 8215) puts it in bits
      // 48-87 around the reserved u octet (bits 64-71).
      return addr.match(NAT64_WELL_KNOWN) ? [v4(p6, p7)] : [v4(p3, ((p4 & 0xff) << 8) | (p5 >> 8))];
    case '6to4':
      return [v4(p1, p2)];
    case 'teredo':
      // The server's address in clear, the client's with every bit inverted.
      return [v4(p2, p3), v4(p6 ^ 0xffff, p7 ^ 0xffff)];
    default:
      return [];
  }
}

/**
 * Parses an address in any spelling an HTTP client or resolver would accept: dotted, short
 * (`127.1`), decimal (`2130706433`), octal and hex IPv4, bracketed or zoned IPv6. Everything goes
 * through the WHATWG URL host parser first, the one that decides where `http.request` connects, so
 * the classifier judges exactly the address a delivery would reach (ipaddr.js on its own reads
 * `::8.8.8.8` as IPv4-mapped, which no socket does).
 */
function parseAddress(raw: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  // A zone id only picks the interface of a link-local address; the address is what is judged.
  const bare = raw.trim().replace(/^\[(.*)\]$/, '$1').replace(/%.*$/, '');
  try {
    const host = new URL(`http://${bare.includes(':') ? `[${bare}]` : bare}/`).hostname.replace(/^\[(.*)\]$/, '$1');
    return ipaddr.isValid(host) ? ipaddr.parse(host) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Why an IP address is not on the public internet (`loopback`, `private`, `uniqueLocal`, …, as
 * ipaddr.js names its ranges), or undefined if it is. Anything that does not parse is refused.
 */
export function nonPublicRange(raw: string): string | undefined {
  const addr = parseAddress(raw);
  if (!addr) return 'not an IP address';
  if (addr.kind() === 'ipv4') {
    const range = addr.range();
    return range === 'unicast' ? undefined : range;
  }
  const v6 = addr as ipaddr.IPv6;
  const range = v6.range();
  if (EMBEDDING_V6_RANGES.has(range)) {
    for (const inner of embeddedIPv4(v6, range)) {
      const innerRange = inner.range();
      if (innerRange !== 'unicast') return `${innerRange} (embedded in ${range})`;
    }
    return undefined;
  }
  if (range !== 'unicast') return range;
  return v6.match(GLOBAL_UNICAST_V6) ? undefined : 'reserved';
}

export function isPublicAddress(ip: string): boolean {
  return nonPublicRange(ip) === undefined;
}

/** Names that never leave the machine or the site (RFC 6761, RFC 6762, and the cloud convention). */
function isLocalName(host: string): boolean {
  return host === 'localhost' || host.endsWith('.localhost') || host.endsWith('.local') || host.endsWith('.internal');
}

/**
 * Why a URL may not be an endpoint under `rule`, or undefined if it may. `malformed` says whether
 * the URL itself is broken (then no rule could accept it) or only refused by the rule.
 */
export function refuseUrl(raw: string, rule: EndpointRule): { why: string; malformed: boolean } | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { why: 'is not a valid URL', malformed: true };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { why: 'must use http or https', malformed: true };
  if (url.username || url.password) return { why: 'must not contain credentials', malformed: true };
  if (url.hash) return { why: 'must not contain a fragment', malformed: true };
  if (rule.httpsOnly && url.protocol !== 'https:') {
    return { why: 'must use https: live-mode events carry real payments, which must not cross the network in clear', malformed: false };
  }
  if (!rule.publicOnly) return undefined;
  // WHATWG has already turned every IPv4 spelling into dotted form and IPv6 into compressed hex.
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '').toLowerCase();
  if (isLocalName(host)) return { why: `must be a public address: ${host} is a local name`, malformed: false };
  if (ipaddr.isValid(host)) {
    const range = nonPublicRange(host);
    if (range) return { why: `must be a public address: ${host} is ${range}, which webhooks are not sent to`, malformed: false };
  }
  return undefined;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** The lookup options `net.connect` passes; `all` is set when it tries several addresses (happy eyeballs). */
interface ConnectLookupOptions {
  family?: number | 'IPv4' | 'IPv6' | undefined;
  hints?: number | undefined;
  all?: boolean | undefined;
}

/**
 * A DNS lookup for `http.request` that refuses a name if any address it resolves to is not
 * public. Checking at connect time, not only the name when the endpoint was saved, stops DNS
 * rebinding (a public name that later resolves to 127.0.0.1); refusing the whole answer rather
 * than dropping its private addresses leaves a mixed answer, a rebinding trick, nothing to fail
 * over to. Literal IP hosts never reach a lookup: `refuseUrl` checks those.
 */
export function publicOnlyLookup(hostname: string, options: ConnectLookupOptions, callback: LookupCallback): void {
  const { family, hints } = options;
  dnsLookup(hostname, { all: true, ...(family !== undefined ? { family } : {}), ...(hints !== undefined ? { hints } : {}) }, (err, addresses) => {
    if (err) return callback(err, '');
    const refused = addresses.find((a) => !isPublicAddress(a.address));
    if (refused || addresses.length === 0) {
      const why = refused ? `${hostname} resolves to ${refused.address} (${nonPublicRange(refused.address)}), which webhooks are not sent to` : `${hostname} resolves to nothing`;
      return callback(Object.assign(new Error(why), { code: 'EGRESS_REFUSED' }), '');
    }
    if (options.all) return callback(null, addresses);
    const first = addresses[0] as LookupAddress;
    callback(null, first.address, first.family);
  });
}

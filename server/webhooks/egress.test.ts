import { describe, expect, it } from 'vitest';
import { endpointRule, isPublicAddress, nonPublicRange, publicOnlyLookup, refuseUrl } from './egress.js';

/** Loopback, private and otherwise non-public addresses, in every spelling a client or resolver accepts. */
const NON_PUBLIC = [
  // IPv4, dotted and otherwise
  '127.0.0.1',
  '127.1',
  '2130706433',
  '0x7f.1',
  '0x7f000001',
  '0177.0.0.1',
  '127.000.000.001',
  '10.1.2.3',
  '172.16.0.1',
  '172.31.255.255',
  '192.168.1.1',
  '169.254.169.254',
  '100.64.0.1',
  '100.127.255.254',
  '0.0.0.0',
  '0.1.2.3',
  '224.0.0.1',
  '239.255.255.250',
  '255.255.255.255',
  '240.0.0.1',
  '192.0.2.1',
  '198.18.0.1',
  // IPv6 proper
  '::',
  '::1',
  '[::1]',
  'fc00::1',
  'fd00::1',
  'fe80::1',
  'fe80::1%eth0',
  'ff02::1',
  '2001:db8::1',
  // IPv4 inside IPv6: mapped, compatible, NAT64 (both prefixes), 6to4, Teredo
  '::ffff:127.0.0.1',
  '::ffff:7f00:1',
  '[::ffff:7f00:1]',
  '::ffff:10.0.0.1',
  '::ffff:169.254.169.254',
  '::ffff:0:7f00:1',
  '::127.0.0.1',
  '::7f00:1',
  '::8.8.8.8',
  '64:ff9b::7f00:1',
  '64:ff9b::127.0.0.1',
  '64:ff9b::a00:1',
  '64:ff9b:1:7f00:0:100::',
  '2002:7f00:1::1',
  '2002:c0a8:101::1',
  // Teredo: server 65.54.227.120 (public), client 127.0.0.1 stored inverted (80ff:fffe)
  '2001:0:4136:e378:8000:63bf:80ff:fffe',
  // Teredo: server in 10/8
  '2001:0:a00:1:8000:63bf:f7f7:f7f7',
];

const PUBLIC = ['8.8.8.8', '1.1.1.1', '172.32.0.1', '100.128.0.1', '2606:4700::1111', '[2606:4700::1111]', '2a00:1450:4001:81c::200e', '::ffff:8.8.8.8', '[::ffff:8.8.8.8]', '64:ff9b::808:808', '64:ff9b:1:808:8:800::', '2002:808:808::1', '2001:0:4136:e378:8000:63bf:f7f7:f7f7'];

describe('the webhook address classifier', () => {
  it.each(NON_PUBLIC)('refuses %s', (ip) => {
    expect(isPublicAddress(ip)).toBe(false);
    expect(nonPublicRange(ip)).toBeTypeOf('string');
  });

  it.each(PUBLIC)('allows %s', (ip) => {
    expect(nonPublicRange(ip)).toBeUndefined();
  });

  it('names the range, and the embedding range for IPv4 inside IPv6', () => {
    expect(nonPublicRange('127.1')).toBe('loopback');
    expect(nonPublicRange('::ffff:7f00:1')).toBe('loopback (embedded in ipv4Mapped)');
    expect(nonPublicRange('64:ff9b::7f00:1')).toBe('loopback (embedded in rfc6052)');
    expect(nonPublicRange('2002:c0a8:101::1')).toBe('private (embedded in 6to4)');
    expect(nonPublicRange('not-an-ip')).toBe('not an IP address');
  });
});

describe('the endpoint rule', () => {
  const any = { egress: 'any', liveEndpointsFollowTestRule: false } as const;
  const strict = { egress: 'public', liveEndpointsFollowTestRule: false } as const;

  it('asks public https of live endpoints, and lets test endpoints point anywhere by default', () => {
    expect(endpointRule('live', any)).toEqual({ publicOnly: true, httpsOnly: true });
    expect(endpointRule('test', any)).toEqual({ publicOnly: false, httpsOnly: false });
    expect(endpointRule('live', strict)).toEqual({ publicOnly: true, httpsOnly: true });
    expect(endpointRule('test', strict)).toEqual({ publicOnly: true, httpsOnly: false });
  });

  it('lets live endpoints follow the test rule when told to', () => {
    expect(endpointRule('live', { ...any, liveEndpointsFollowTestRule: true })).toEqual(endpointRule('test', any));
    expect(endpointRule('live', { ...strict, liveEndpointsFollowTestRule: true })).toEqual(endpointRule('test', strict));
  });
});

describe('refuseUrl', () => {
  const open = { publicOnly: false, httpsOnly: false };
  const publicOnly = { publicOnly: true, httpsOnly: false };
  const live = { publicOnly: true, httpsOnly: true };

  it('allows private targets under the open rule', () => {
    expect(refuseUrl('http://127.0.0.1:3000/hooks', open)).toBeUndefined();
    expect(refuseUrl('http://localhost:3000/hooks', open)).toBeUndefined();
  });

  it.each([
    'http://127.0.0.1:3000/hooks',
    'http://127.1/hooks',
    'http://2130706433/hooks',
    'http://0x7f.1/hooks',
    'http://0177.0.0.1/hooks',
    'http://127.0.0.1./hooks',
    'http://%31%32%37.0.0.1/hooks',
    'http://[::1]/hooks',
    'http://[::]/hooks',
    'http://[::ffff:127.0.0.1]/hooks',
    'http://[::ffff:7f00:1]/hooks',
    'http://[::127.0.0.1]/hooks',
    'http://[64:ff9b::7f00:1]/hooks',
    'http://[64:ff9b:1:7f00:0:100::]/hooks',
    'http://[2002:7f00:1::1]/hooks',
    'http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/hooks',
    'http://[fd12:3456::1]/hooks',
    'http://[fe80::1]/hooks',
    'http://169.254.169.254/latest/meta-data',
    'http://100.64.0.1/hooks',
    'http://0.0.0.0/hooks',
    'http://0/hooks',
    'http://224.0.0.1/hooks',
    'http://255.255.255.255/hooks',
    'http://localhost/hooks',
    'http://LOCALHOST./hooks',
    'http://api.localhost/hooks',
    'http://printer.local/hooks',
    'http://metadata.google.internal/computeMetadata',
  ])('refuses %s under the public rule', (url) => {
    const refused = refuseUrl(url, publicOnly);
    expect(refused?.malformed).toBe(false);
    expect(refused?.why).toMatch(/must be a public address/);
  });

  it('allows public addresses and names under the public rule', () => {
    for (const url of ['https://shop.example.com/hooks', 'http://8.8.8.8/hooks', 'http://[2606:4700::1111]/hooks', 'http://[::ffff:8.8.8.8]/hooks']) {
      expect(refuseUrl(url, publicOnly), url).toBeUndefined();
    }
  });

  it('asks https of live endpoints, saying why', () => {
    expect(refuseUrl('http://shop.example.com/hooks', live)?.why).toMatch(/must use https: live-mode events carry real payments/);
    expect(refuseUrl('https://shop.example.com/hooks', live)).toBeUndefined();
    expect(refuseUrl('https://127.0.0.1/hooks', live)?.why).toMatch(/public address/);
  });

  it('refuses what is not an http(s) URL under every rule', () => {
    expect(refuseUrl('ftp://example.com', open)).toEqual({ why: 'must use http or https', malformed: true });
    expect(refuseUrl('not a url', open)?.why).toMatch(/valid/);
    expect(refuseUrl('https://user:pw@example.com', open)?.why).toMatch(/credentials/);
  });
});

describe('the public-only lookup', () => {
  function lookup(host: string, all: boolean): Promise<{ err: NodeJS.ErrnoException | null; address: unknown }> {
    return new Promise((resolve) => publicOnlyLookup(host, { all }, (err, address) => resolve({ err, address })));
  }

  it('refuses a name resolving to loopback, for single and all-addresses callers', async () => {
    for (const all of [false, true]) {
      const { err } = await lookup('localhost', all);
      expect(err?.code).toBe('EGRESS_REFUSED');
      expect(err?.message).toMatch(/localhost resolves to .* \(loopback\)/);
    }
  });

  it('passes a literal public address through', async () => {
    expect(await lookup('8.8.8.8', false)).toEqual({ err: null, address: '8.8.8.8' });
    expect(await lookup('8.8.8.8', true)).toEqual({ err: null, address: [{ address: '8.8.8.8', family: 4 }] });
  });
});

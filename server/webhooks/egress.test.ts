import { describe, expect, it } from 'vitest';
import { isPrivateAddress, refuseUrl } from './egress.js';

describe('webhook egress policy', () => {
  it('tells private and loopback addresses from public ones', () => {
    for (const ip of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', '::', 'fd00::1', 'fe80::1', '::ffff:127.0.0.1']) {
      expect(isPrivateAddress(ip), ip).toBe(true);
    }
    for (const ip of ['8.8.8.8', '172.32.0.1', '1.1.1.1', '2606:4700::1111', '::ffff:8.8.8.8']) {
      expect(isPrivateAddress(ip), ip).toBe(false);
    }
  });

  it('allows private targets by default and refuses them under the public policy', () => {
    expect(refuseUrl('http://127.0.0.1:3000/hooks', 'any')).toBeUndefined();
    expect(refuseUrl('http://localhost:3000/hooks', 'any')).toBeUndefined();
    expect(refuseUrl('http://127.0.0.1:3000/hooks', 'public')).toMatch(/private/);
    expect(refuseUrl('http://localhost/hooks', 'public')).toMatch(/private/);
    expect(refuseUrl('http://[::1]/hooks', 'public')).toMatch(/private/);
    expect(refuseUrl('http://169.254.169.254/latest/meta-data', 'public')).toMatch(/private/);
    expect(refuseUrl('https://shop.example.com/hooks', 'public')).toBeUndefined();
  });

  it('refuses what is not an http(s) URL', () => {
    expect(refuseUrl('ftp://example.com', 'any')).toMatch(/http/);
    expect(refuseUrl('not a url', 'any')).toMatch(/valid/);
    expect(refuseUrl('https://user:pw@example.com', 'any')).toMatch(/credentials/);
  });
});

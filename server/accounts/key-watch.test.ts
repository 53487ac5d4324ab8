import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDomain, type Domain } from '../../test/helpers/domain.js';
import { eventually } from '../../test/helpers/tmp.js';
import type { KeyEnd } from './key-watch.js';

describe('KeyWatch', () => {
  let d: Domain;
  beforeEach(async () => {
    d = await openDomain();
  });
  afterEach(async () => {
    d.services.keyWatch.stop();
    await d.close();
  });

  async function heldKey(name: string): Promise<{ id: string; ends: KeyEnd[]; release: () => void }> {
    const key = await d.services.apiKeys.create(d.scope, { name, scopes: ['events:read'] });
    const ends: KeyEnd[] = [];
    const release = d.services.keyWatch.hold({ keyId: key.id, ...d.scope }, (why) => ends.push(why));
    // The first read of a newly held key: done once the watch knows it is in force.
    await new Promise((resolve) => setTimeout(resolve, 50));
    return { id: key.id, ends, release };
  }

  it('ends every holder of a key once when it is revoked, and none of another key’s', async () => {
    const revoked = await heldKey('Revoked');
    const second = d.services.keyWatch.hold({ keyId: revoked.id, ...d.scope }, (why) => revoked.ends.push(why));
    const kept = await heldKey('Kept');
    await d.services.apiKeys.revoke(d.scope, revoked.id);
    await eventually(() => (revoked.ends.length === 2 ? true : undefined));
    expect(revoked.ends).toEqual(['revoked', 'revoked']);
    expect(kept.ends).toEqual([]);
    expect(d.services.keyWatch.size).toBe(1);
    second();
    kept.release();
    expect(d.services.keyWatch.size).toBe(0);
  });

  it('ends a key rolled with no grace as expired, and keeps one rolled with grace until then', async () => {
    const now = await heldKey('Now');
    const later = await heldKey('Later');
    await d.services.apiKeys.roll(d.scope, now.id, 0);
    await d.services.apiKeys.roll(d.scope, later.id, 3_600_000);
    await eventually(() => (now.ends.length > 0 ? true : undefined));
    expect(now.ends).toEqual(['expired']);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(later.ends).toEqual([]);
    later.release();
  });

  it('ends a connection whose key was revoked between its request and its hold', async () => {
    const key = await d.services.apiKeys.create(d.scope, { name: 'Gone', scopes: ['events:read'] });
    await d.services.apiKeys.revoke(d.scope, key.id);
    const ends: KeyEnd[] = [];
    d.services.keyWatch.hold({ keyId: key.id, ...d.scope }, (why) => ends.push(why));
    await eventually(() => (ends.length > 0 ? true : undefined));
    expect(ends).toEqual(['revoked']);
    expect(d.services.keyWatch.size).toBe(0);
  });
});

import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tempDir } from '../../test/helpers/tmp.js';
import { createKeyFile, formatKeyFile, keySourceOf, makeDefaultKeyFile, parseKeyFile, readKeySource, replaceKeyFile } from './key-source.js';
import { isSealed, Keyring, keyIdOf, SealedValueError } from './keyring.js';
import { formatMainKey, mainKeyOf, newMainKeyMaterial, parseMainKey } from './main-key.js';

const env = (...materials: Buffer[]) => new Keyring({ kind: 'env', keys: materials });

describe('sealing values', () => {
  it('round-trips, in the versioned form naming its key, with a fresh nonce each time', () => {
    const material = newMainKeyMaterial();
    const keyring = env(material);
    const a = keyring.seal('customers.email:c1', 'ada@example.com');
    const b = keyring.seal('customers.email:c1', 'ada@example.com');
    expect(a).toMatch(new RegExp(`^enc:v1:${mainKeyOf(material).id}:[A-Za-z0-9_-]+$`));
    expect(a).not.toBe(b);
    expect(a).not.toContain('ada');
    expect(keyring.open('customers.email:c1', a)).toBe('ada@example.com');
    expect(keyring.open('customers.email:c1', b)).toBe('ada@example.com');
    expect(isSealed(a)).toBe(true);
    expect(keyIdOf(a)).toBe(keyring.primaryId);
  });

  it('binds a value to its place: moved to another row or column, or altered, it does not open', () => {
    const keyring = env(newMainKeyMaterial());
    const sealed = keyring.seal('webhook_endpoints.secret:e1', 'whsec_abc');
    expect(() => keyring.open('webhook_endpoints.secret:e2', sealed)).toThrow(SealedValueError);
    expect(() => keyring.open('webhook_endpoints.previous_secret:e1', sealed)).toThrow(/altered, or moved/);
    const body = sealed.slice(sealed.lastIndexOf(':') + 1);
    const flipped = `${body.slice(0, 20)}${body[20] === 'A' ? 'B' : 'A'}${body.slice(21)}`;
    expect(() => keyring.open('webhook_endpoints.secret:e1', sealed.replace(body, flipped))).toThrow(SealedValueError);
    // The key id is bound too: a value cannot be passed off as sealed under another key.
    const other = env(newMainKeyMaterial());
    expect(() => other.open('webhook_endpoints.secret:e1', sealed)).toThrow(/does not hold/);
  });

  it('reads legacy plaintext as it is, including text that only looks a little like a sealed value', () => {
    const keyring = env(newMainKeyMaterial());
    expect(keyring.open('customers.name:c1', 'Ada Lovelace')).toBe('Ada Lovelace');
    expect(keyring.open('customers.name:c1', 'enc:not really')).toBe('enc:not really');
    expect(isSealed('enc:v1:zz:abc')).toBe(false);
    expect(keyIdOf('plain')).toBeUndefined();
  });

  it('seals under the primary key and opens under any key it holds', () => {
    const [old, fresh] = [newMainKeyMaterial(), newMainKeyMaterial()];
    const keyring = env(fresh, old);
    expect(keyring.primaryId).toBe(mainKeyOf(fresh).id);
    expect(keyring.ids()).toEqual([mainKeyOf(fresh).id, mainKeyOf(old).id]);
    const underOld = env(old).seal('p:1', 'x');
    expect(keyring.open('p:1', underOld)).toBe('x');
    expect(keyring.usePrimary(mainKeyOf(old).id)).toBe(true);
    expect(keyIdOf(keyring.seal('p:1', 'x'))).toBe(mainKeyOf(old).id);
    expect(keyring.usePrimary(mainKeyOf(newMainKeyMaterial()).id)).toBe(false);
    expect(keyIdOf(keyring.seal('p:1', 'x', mainKeyOf(fresh).id))).toBe(mainKeyOf(fresh).id);
  });

  it('gives keyed lookup hashes: equal for equal values under one key, never the plaintext, different per key and purpose', () => {
    const [k1, k2] = [newMainKeyMaterial(), newMainKeyMaterial()];
    const one = env(k1);
    const hash = one.lookupHash('customers.email', 'ada@example.com');
    expect(hash).toBe(one.lookupHash('customers.email', 'ada@example.com'));
    expect(hash.startsWith(`${mainKeyOf(k1).id}:`)).toBe(true);
    expect(hash).not.toContain('ada');
    expect(one.lookupHash('customers.phone', 'ada@example.com')).not.toBe(hash);
    expect(env(k2).lookupHash('customers.email', 'ada@example.com')).not.toBe(hash);
    expect(env(k2, k1).lookupHashes('customers.email', 'ada@example.com')).toContain(hash);
  });
});

describe('main keys', () => {
  it('reads 32 bytes as base64, base64url or hex, and derives a stable id', () => {
    const material = newMainKeyMaterial();
    expect(parseMainKey(material.toString('base64'))).toEqual(material);
    expect(parseMainKey(formatMainKey(material))).toEqual(material);
    expect(parseMainKey(material.toString('hex'))).toEqual(material);
    expect(mainKeyOf(material).id).toBe(mainKeyOf(Buffer.from(material)).id);
    expect(mainKeyOf(material).id).toMatch(/^[0-9a-f]{16}$/);
    for (const bad of ['', 'short', 'x'.repeat(44), Buffer.alloc(16).toString('base64'), Buffer.alloc(33).toString('hex')]) {
      expect(() => parseMainKey(bad)).toThrow(/32 random bytes/);
    }
  });
});

describe('key files', () => {
  let dir: ReturnType<typeof tempDir>;
  beforeEach(() => {
    dir = tempDir('pos-keys-');
  });
  afterEach(() => dir.cleanup());

  it('makes the data dir key file once, owner-only, and never over an existing one', () => {
    const source = keySourceOf({ dataDir: dir.path });
    expect(source).toEqual({ kind: 'file', path: join(dir.path, 'master.key'), explicit: false });
    expect(readKeySource(source)).toEqual([]);
    expect(makeDefaultKeyFile(source)).toBe(true);
    expect(statSync(join(dir.path, 'master.key')).mode & 0o777).toBe(0o600);
    const [key] = readKeySource(source);
    expect(makeDefaultKeyFile(source)).toBe(false);
    expect(readKeySource(source)).toEqual([key]);
    expect(() => createKeyFile(join(dir.path, 'master.key'), [newMainKeyMaterial()])).toThrow(/EEXIST/);
  });

  it('keeps keys newest first with comments, replaces the file whole and owner-only', () => {
    const path = join(dir.path, 'keys');
    const [a, b] = [newMainKeyMaterial(), newMainKeyMaterial()];
    writeFileSync(path, `# a comment\n\n${formatMainKey(a)}\n  ${b.toString('hex')}  \n`);
    expect(parseKeyFile(readFileSync(path, 'utf8'), path)).toEqual([a, b]);
    replaceKeyFile(path, [b]);
    expect(readKeySource({ kind: 'file', path, explicit: true })).toEqual([b]);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(formatKeyFile([a])).toContain('Back this file up');
    writeFileSync(path, 'not a key\n');
    expect(() => readKeySource({ kind: 'file', path, explicit: true })).toThrow(/line 1: a main key is 32 random bytes/);
  });

  it('reads its key file again for a new key id, even just after reading it for another', () => {
    const path = join(dir.path, 'rotating.key');
    const [old, next] = [newMainKeyMaterial(), newMainKeyMaterial()];
    createKeyFile(path, [old]);
    const keyring = new Keyring({ kind: 'file', path, explicit: true });
    // A value under some other id made it read the file a moment ago...
    expect(keyring.has('k_unknown')).toBe(false);
    // ...then a rotation writes its new key and seals a value under it: this id is read for at once.
    replaceKeyFile(path, [next, old]);
    const sealed = new Keyring({ kind: 'env', keys: [next] }).seal('customers.email:c1', 'ada@example.com');
    expect(keyring.open('customers.email:c1', sealed)).toBe('ada@example.com');
    // An id nobody has is looked for once a second at most.
    expect(keyring.has('k_unknown')).toBe(false);
  });

  it('refuses an explicit key file that is missing or empty, and a key given two ways', () => {
    expect(() => readKeySource({ kind: 'file', path: join(dir.path, 'nope'), explicit: true })).toThrow(/cannot read the main key file/);
    writeFileSync(join(dir.path, 'empty'), '# nothing\n');
    expect(() => readKeySource({ kind: 'file', path: join(dir.path, 'empty'), explicit: true })).toThrow(/holds no key/);
    expect(() => keySourceOf({ dataDir: dir.path, masterKey: [newMainKeyMaterial()], masterKeyFile: '/k' })).toThrow(/one way/);
  });

  it('learns a key added to its file when it meets a value under it', () => {
    const path = join(dir.path, 'master.key');
    const [old, fresh] = [newMainKeyMaterial(), newMainKeyMaterial()];
    createKeyFile(path, [old]);
    const running = new Keyring({ kind: 'file', path, explicit: true });
    const rotation = new Keyring({ kind: 'env', keys: [fresh] });
    const sealed = rotation.seal('customers.email:c1', 'ada@example.com');
    replaceKeyFile(path, [fresh, old]);
    expect(running.open('customers.email:c1', sealed)).toBe('ada@example.com');
    expect(running.has(mainKeyOf(fresh).id)).toBe(true);
    expect(running.primaryId).toBe(mainKeyOf(old).id);
  });
});

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../shared/time.js';
import { ReceiptPolicies } from './receipt-policy.js';
import { ReaderBook } from './readers.js';
import { AgentState } from './state.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function setup(override?: 'always' | 'ask' | 'never') {
  const dir = mkdtempSync(join(tmpdir(), 'pos-policy-unit-'));
  dirs.push(dir);
  const state = await AgentState.open(dir);
  const book = new ReaderBook(systemClock, { reader: () => undefined, readers: () => undefined });
  const add = (key: string, location: string | null) => book.remember(key, { driver: 'processor', id: null, processor_terminal_id: key, name: key, serial_number: null, location_id: location }, null);
  return { state, book, add, policies: new ReceiptPolicies(override, state, book) };
}

const LOCATIONS = [
  { id: 'loc-front', display_name: 'Front', receipt_policy: 'never' as const },
  { id: 'loc-patio', display_name: 'Patio', receipt_policy: 'ask' as const },
];

describe('receipt policies on the agent', () => {
  it("follows each reader's location, always until the server has said", async () => {
    const { add, policies, state } = await setup();
    add('tmr_front', 'loc-front');
    add('tmr_patio', 'loc-patio');
    expect(policies.forReader('tmr_front')).toBe('always');
    expect(policies.setLocations(LOCATIONS)).toBe(true);
    expect(policies.setLocations(LOCATIONS)).toBe(false);
    expect(policies.forReader('tmr_front')).toBe('never');
    expect(policies.forReader('tmr_patio')).toBe('ask');
    expect(state.data.locations).toEqual(LOCATIONS);
  });

  it("takes a cash sale's policy from the counter's reader, else the one location of the agent's readers, else the first location", async () => {
    const { add, policies } = await setup();
    policies.setLocations(LOCATIONS);
    expect(policies.forSale()).toBe('never');
    add('tmr_patio', 'loc-patio');
    expect(policies.forSale()).toBe('ask');
    add('tmr_front', 'loc-front');
    expect(policies.forSale()).toBe('never');
    expect(policies.forSale('tmr_patio')).toBe('ask');
  });

  it('lets --receipts override every location', async () => {
    const { add, policies } = await setup('always');
    policies.setLocations(LOCATIONS);
    add('tmr_front', 'loc-front');
    expect(policies.forReader('tmr_front')).toBe('always');
    expect(policies.forSale()).toBe('always');
  });
});

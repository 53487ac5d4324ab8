import { describe, expect, it } from 'vitest';
import { loadAgentConfig } from '../shared/config.js';
import { BACKOFF_BASE_MS, BACKOFF_CAP_MS, backoffDelay } from './upstream.js';

describe('reconnect backoff', () => {
  it('doubles from the base to the cap, with half of each wait random', () => {
    expect(backoffDelay(0, () => 0)).toBe(BACKOFF_BASE_MS / 2);
    expect(backoffDelay(0, () => 1)).toBe(BACKOFF_BASE_MS);
    expect(backoffDelay(3, () => 1)).toBe(BACKOFF_BASE_MS * 8);
    expect(backoffDelay(50, () => 1)).toBe(BACKOFF_CAP_MS);
    expect(backoffDelay(50, () => 0)).toBe(BACKOFF_CAP_MS / 2);
  });
});

describe('agent configuration', () => {
  const base = { server: 'http://127.0.0.1:4242', apiKey: 'sk_test_abc' };
  it('binds to localhost without a token and needs one on the LAN', () => {
    expect(loadAgentConfig(base, {}).listen).toEqual({ host: '127.0.0.1', port: 4848 });
    expect(() => loadAgentConfig({ ...base, listen: '0.0.0.0:4848' }, {})).toThrow(/needs --token/);
    expect(loadAgentConfig({ ...base, listen: '0.0.0.0:4848', token: 'a-long-enough-token' }, {}).token).toBe('a-long-enough-token');
  });

  it('reads the environment and refuses what cannot work', () => {
    expect(loadAgentConfig({}, { POS_SERVER_URL: 'http://h:1/', POS_API_KEY: 'sk_live_x' })).toMatchObject({ serverUrl: 'http://h:1', heartbeatMs: 5000 });
    expect(() => loadAgentConfig({ ...base, apiKey: 'pk_test_x' }, {})).toThrow(/secret key/);
    expect(() => loadAgentConfig({ ...base, apiKey: 'sk_live_x', simulate: 2 }, {})).toThrow(/test key/);
    expect(() => loadAgentConfig({ ...base, printer: 'ttyUSB0' }, {})).toThrow(/device path/);
    expect(() => loadAgentConfig({ ...base, display: 'tcp:10.0.0.5:9100' }, {})).toThrow(/device path/);
    expect(() => loadAgentConfig({ ...base, printerColumns: 40 }, {})).toThrow(/32 \(58 mm paper\)/);
    expect(() => loadAgentConfig({ ...base, receipts: 'sometimes' }, {})).toThrow(/receipts/);
    const printer = loadAgentConfig({ ...base, printer: 'tcp:192.168.1.50:9100' }, { POS_AGENT_PRINTER_COLUMNS: '32' });
    expect(printer).toMatchObject({ printer: 'tcp:192.168.1.50:9100', printerColumns: 32, printerCodepage: 'cp858' });
    // No --receipts: each location's receipt policy applies; given, it overrides them all.
    expect(printer.receipts).toBeUndefined();
    expect(loadAgentConfig(base, { POS_AGENT_RECEIPTS: 'never' }).receipts).toBe('never');
  });
});

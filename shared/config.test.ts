import { describe, expect, it } from 'vitest';
import { ConfigError, loadServerConfig, loadSimulatorLogLevel, loadSimulatorRateLimits } from './config.js';

describe('--trust-proxy', () => {
  it('trusts no proxy by default', () => {
    expect(loadServerConfig({}, {}).trustProxy).toBeUndefined();
  });

  it('takes a hop count or a list of addresses, CIDRs and names, from the flag or POS_TRUST_PROXY', () => {
    expect(loadServerConfig({ trustProxy: '1' }, {}).trustProxy).toBe(1);
    expect(loadServerConfig({}, { POS_TRUST_PROXY: '10.0.0.0/8, fd00::/8' }).trustProxy).toEqual(['10.0.0.0/8', 'fd00::/8']);
    expect(loadServerConfig({ trustProxy: 'loopback,192.168.1.10' }, { POS_TRUST_PROXY: '2' }).trustProxy).toEqual(['loopback', '192.168.1.10']);
  });

  it('refuses anything else, naming the setting', () => {
    for (const value of ['0', 'true', 'everything', '10.0.0.0/33', '10.1', '1.5']) {
      expect(() => loadServerConfig({ trustProxy: value }, {}), value).toThrow(ConfigError);
    }
    expect(() => loadServerConfig({ trustProxy: 'nope' }, {})).toThrow(/trustProxy: "nope" is not a hop count/);
  });
});

describe('the webhook egress settings', () => {
  it('default to any, with live endpoints on their own rule', () => {
    expect(loadServerConfig({}, {})).toMatchObject({ webhookEgress: 'any', liveEndpointsFollowTestRule: false });
    expect(loadServerConfig({}, { POS_WEBHOOK_EGRESS: 'public' }).webhookEgress).toBe('public');
  });
});

describe('--simulate-live', () => {
  it('is off by default; the flag or POS_SIMULATE_LIVE turns it on, and live endpoints then follow the test rule', () => {
    expect(loadServerConfig({}, {})).toMatchObject({ simulateLive: false, liveEndpointsFollowTestRule: false });
    expect(loadServerConfig({ simulateLive: true }, {})).toMatchObject({ simulateLive: true, liveEndpointsFollowTestRule: true });
    expect(loadServerConfig({}, { POS_SIMULATE_LIVE: 'true' }).simulateLive).toBe(true);
  });

  it('is refused with --processor stripe, where live payments are real', () => {
    expect(() => loadServerConfig({ simulateLive: true, processor: 'stripe' }, {})).toThrow(/live payments are real/);
  });
});

describe('POS_SIMULATOR_RATE_LIMITS', () => {
  it("keeps the simulator's rate limits on unless set to off, for pos server, pos up and pos simulator alike", () => {
    expect(loadServerConfig({}, {}).simulatorRateLimits).toBe(true);
    expect(loadServerConfig({}, { POS_SIMULATOR_RATE_LIMITS: 'on' }).simulatorRateLimits).toBe(true);
    expect(loadServerConfig({}, { POS_SIMULATOR_RATE_LIMITS: 'off' }).simulatorRateLimits).toBe(false);
    expect(loadSimulatorRateLimits({})).toBe(true);
    expect(loadSimulatorRateLimits({ POS_SIMULATOR_RATE_LIMITS: 'off' })).toBe(false);
  });

  it('refuses anything but on and off', () => {
    expect(() => loadServerConfig({}, { POS_SIMULATOR_RATE_LIMITS: 'false' })).toThrow(ConfigError);
    expect(() => loadSimulatorRateLimits({ POS_SIMULATOR_RATE_LIMITS: '0' })).toThrow(/simulatorRateLimits/);
  });
});

describe("pos simulator's log level", () => {
  it('is info unless the flag or POS_LOG_LEVEL says otherwise, the flag first', () => {
    expect(loadSimulatorLogLevel({}, {})).toBe('info');
    expect(loadSimulatorLogLevel({}, { POS_LOG_LEVEL: 'warn' })).toBe('warn');
    expect(loadSimulatorLogLevel({ logLevel: 'silent' }, { POS_LOG_LEVEL: 'warn' })).toBe('silent');
  });

  it("refuses a level pos server would refuse", () => {
    expect(() => loadSimulatorLogLevel({ logLevel: 'quiet' }, {})).toThrow(ConfigError);
    expect(() => loadServerConfig({ logLevel: 'quiet' }, {})).toThrow(ConfigError);
  });
});

describe('connected accounts', () => {
  it('are express by default, custom when asked, and nothing else', () => {
    expect(loadServerConfig({}, {}).accountType).toBe('express');
    expect(loadServerConfig({}, { POS_ACCOUNT_TYPE: 'custom' }).accountType).toBe('custom');
    expect(() => loadServerConfig({ accountType: 'standard' }, {})).toThrow(/accountType/);
  });

  it('are ready at once on the simulated live side unless told to walk onboarding, which needs --simulate-live', () => {
    expect(loadServerConfig({ simulateLive: true }, {}).simulatedLiveAccounts).toBe('ready');
    expect(loadServerConfig({ simulateLive: true, simulatedLiveAccounts: 'onboarding' }, {}).simulatedLiveAccounts).toBe('onboarding');
    expect(() => loadServerConfig({ simulatedLiveAccounts: 'onboarding' }, {})).toThrow(/needs --simulate-live/);
    expect(() => loadServerConfig({ simulateLive: true, simulatedLiveAccounts: 'maybe' }, {})).toThrow(ConfigError);
  });
});

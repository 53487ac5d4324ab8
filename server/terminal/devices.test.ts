import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { UpstreamDevice } from '../../shared/agent-upstream.js';
import { type Domain, openDomain } from '../../test/helpers/domain.js';

const TTL_MS = 15_000;

const printer: UpstreamDevice = { id: 'printer', kind: 'receipt_printer', target: 'usb:04b8:0e15', status: 'online', last_error: null, paper: 'near_end', cover_open: false, drawer_open: true, queued: 2 };
const display: UpstreamDevice = { id: 'display', kind: 'customer_display', target: '/dev/ttyS1', status: 'online', last_error: null, paper: null, cover_open: null, drawer_open: null, queued: null };

describe('counter devices agents report', () => {
  let d: Domain;
  let agentId: string;
  beforeEach(async () => {
    d = await openDomain();
    agentId = randomUUID();
    await d.services.agents.connect(d.scope, { agent_id: agentId, name: 'Till 2', version: '1', heartbeat_ms: 5_000, cursor: null }, randomUUID());
  });
  afterEach(async () => {
    await d.close();
  });

  it('stores a report whole, keeps each device its id, and drops what a later report leaves out', async () => {
    expect(await d.services.devices.report(d.scope, agentId, TTL_MS, [printer, display])).toBe(2);
    const first = await d.services.devices.list(d.scope);
    expect(first.map((x) => x.device_id)).toEqual(['display', 'printer']);
    expect(first[1]).toMatchObject({
      kind: 'receipt_printer',
      agent_name: 'Till 2',
      connection: 'usb',
      status: 'online',
      last_seen_at: new Date(d.clock.now()).toISOString().replace('Z', '+00:00'),
      printer: { paper: 'near_end', cover_open: false, drawer_open: true, queued: 2 },
    });
    expect(first[0]).toMatchObject({ connection: 'serial', printer: null });

    d.clock.advance(1_000);
    await d.services.devices.report(d.scope, agentId, TTL_MS, [{ ...printer, status: 'offline', last_error: 'Printer not answering', paper: null, cover_open: null, drawer_open: null }]);
    const second = await d.services.devices.list(d.scope);
    expect(second).toHaveLength(1);
    expect(second[0]).toMatchObject({ id: first[1]!.id, status: 'offline', last_error: 'Printer not answering', last_seen_at: first[1]!.last_seen_at });
    expect(await d.services.devices.list({ ...d.scope, mode: 'live' })).toEqual([]);
  });

  it('keeps online devices online while the agent heartbeats, and takes them offline when the heartbeats lapse', async () => {
    await d.services.devices.report(d.scope, agentId, TTL_MS, [printer, display]);
    expect(await d.services.agents.nextPresenceDeadline()).toBe(d.clock.now() + TTL_MS);
    d.clock.advance(10_000);
    await d.services.devices.renew(d.scope, agentId, TTL_MS, [printer, display]);
    expect(await d.services.agents.nextPresenceDeadline()).toBe(d.clock.now() + TTL_MS);
    d.clock.advance(TTL_MS - 1);
    expect(await d.services.agents.expire()).toBe(0);
    d.clock.advance(2);
    expect(await d.services.agents.expire()).toBe(2);
    const lapsed = await d.services.devices.list(d.scope);
    expect(lapsed.map((x) => [x.status, x.last_error])).toEqual([
      ['offline', 'Its agent is offline'],
      ['offline', 'Its agent is offline'],
    ]);
    expect(lapsed[1]!.printer).toEqual({ paper: null, cover_open: null, drawer_open: null, queued: 2 });
    expect(await d.services.agents.nextPresenceDeadline()).toBeUndefined();

    // The connection outlived the TTL: the next heartbeat stores the last report again.
    await d.services.devices.renew(d.scope, agentId, TTL_MS, [printer, display]);
    expect((await d.services.devices.list(d.scope)).map((x) => [x.status, x.last_error])).toEqual([
      ['online', null],
      ['online', null],
    ]);
  });

  it('takes the devices offline at once when their agent says goodbye', async () => {
    await d.services.devices.report(d.scope, agentId, TTL_MS, [printer, display]);
    await d.services.agents.goodbye(agentId);
    expect((await d.services.devices.list(d.scope)).map((x) => [x.status, x.last_error])).toEqual([
      ['offline', 'Its agent stopped'],
      ['offline', 'Its agent stopped'],
    ]);
  });
});

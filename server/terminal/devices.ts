import { randomUUID } from 'node:crypto';
import type { UpstreamDevice } from '../../shared/agent-upstream.js';
import { toIsoOrNull, toIsoTimestamp, type Clock } from '../../shared/time.js';
import { notifyOnCommit } from '../db/notify.js';
import type { CounterDevicesTable } from '../db/schema.js';
import type { Executor, Store, Trx } from '../db/store.js';
import type { Scope } from '../accounts/scope.js';
import type { DeviceSchema } from '../../shared/contract/terminal.js';
import type { z } from '../../shared/contract/zod.js';

type Device = z.infer<typeof DeviceSchema>;

/** Why a device went offline without its agent saying so, in the words `last_error` shows. */
export const AGENT_OFFLINE = 'Its agent is offline';
export const AGENT_STOPPED = 'Its agent stopped';

/** How the agent reaches a device, read from its target (agent/devices/link.ts writes them). */
export function connectionOf(target: string): CounterDevicesTable['connection'] {
  if (target.startsWith('tcp:')) return 'tcp';
  if (target.startsWith('usb:')) return 'usb';
  return 'serial';
}

const flag = (value: boolean | null): number | null => (value === null ? null : value ? 1 : 0);
const bool = (value: number | null): boolean | null => (value === null ? null : Number(value) === 1);

export function presentDevice(row: CounterDevicesTable, agentName: string): Device {
  return {
    id: row.id,
    object: 'terminal.device',
    kind: row.kind,
    agent_id: row.agent_id,
    agent_name: agentName,
    device_id: row.device_id,
    target: row.target,
    connection: row.connection,
    status: row.status,
    last_seen_at: toIsoOrNull(row.last_seen_at),
    last_error: row.last_error,
    printer:
      row.kind === 'receipt_printer'
        ? { paper: row.paper, cover_open: bool(row.cover_open), drawer_open: bool(row.drawer_open), queued: Number(row.queued ?? 0) }
        : null,
    is_test: row.mode === 'test',
    created_at: toIsoTimestamp(Number(row.created_at)),
  };
}

/**
 * The counter devices agents drive (receipt printers, customer displays), as their agents report
 * them over the upstream websocket: a whole list after each welcome and on each change. Presence
 * works as the readers' does (server/terminal/agents.ts): an online device stays online while its
 * agent heartbeats, until now + TTL, and goes offline when its agent says goodbye or falls silent.
 */
export class DeviceService {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
  ) {}

  /**
   * Stores an agent's whole device list in one transaction: each device as reported (online ones
   * until now + `ttlMs`), and the agent's devices missing from the list removed. Answers how many
   * are online, which the agent's heartbeats then keep online.
   */
  async report(scope: Scope, agentId: string, ttlMs: number, devices: readonly UpstreamDevice[]): Promise<number> {
    return this.store.transaction((trx) => this.#apply(trx, scope, agentId, ttlMs, devices));
  }

  async #apply(trx: Trx, scope: Scope, agentId: string, ttlMs: number, devices: readonly UpstreamDevice[]): Promise<number> {
    const now = this.clock.now();
    const expiresAt = now + ttlMs;
    const existing = await trx
      .selectFrom('counter_devices')
      .selectAll()
      .where('merchant_id', '=', scope.merchantId)
      .where('mode', '=', scope.mode)
      .where('agent_id', '=', agentId)
      .execute();
    const byId = new Map(existing.map((row) => [row.device_id, row]));
    let earlier = false;
    for (const device of devices) {
      const before = byId.get(device.id);
      const online = device.status === 'online';
      const fields = {
        kind: device.kind,
        target: device.target,
        connection: connectionOf(device.target),
        status: device.status,
        last_seen_at: online ? now : (before?.last_seen_at ?? null),
        last_error: device.last_error,
        paper: device.paper,
        cover_open: flag(device.cover_open),
        drawer_open: flag(device.drawer_open),
        queued: device.queued,
        presence_expires_at: online ? expiresAt : null,
        updated_at: now,
      };
      if (online && (before?.presence_expires_at == null || expiresAt < before.presence_expires_at)) earlier = true;
      if (before) {
        await trx
          .updateTable('counter_devices')
          .set(fields)
          .where('merchant_id', '=', scope.merchantId)
          .where('mode', '=', scope.mode)
          .where('agent_id', '=', agentId)
          .where('device_id', '=', device.id)
          .execute();
      } else {
        await trx
          .insertInto('counter_devices')
          .values({ merchant_id: scope.merchantId, mode: scope.mode, agent_id: agentId, device_id: device.id, id: randomUUID(), created_at: now, ...fields })
          .execute();
      }
    }
    const gone = existing.filter((row) => !devices.some((d) => d.id === row.device_id)).map((row) => row.device_id);
    if (gone.length) {
      await trx
        .deleteFrom('counter_devices')
        .where('merchant_id', '=', scope.merchantId)
        .where('mode', '=', scope.mode)
        .where('agent_id', '=', agentId)
        .where('device_id', 'in', gone)
        .execute();
    }
    // A new or earlier deadline must reach every process's expiry timer (server/terminal/presence-expiry.ts).
    if (earlier) notifyOnCommit(trx, { topic: 'presence' });
    return devices.filter((d) => d.status === 'online').length;
  }

  /**
   * An agent's heartbeat keeps its online devices online until now + `ttlMs`. Deadlines only move
   * later here, so no timer needs telling. Devices that lapsed meanwhile (a heartbeat later than
   * the TTL, the connection still up) are stored again from the agent's last report, which the
   * agent does not repeat while nothing changes.
   */
  async renew(scope: Scope, agentId: string, ttlMs: number, last: readonly UpstreamDevice[]): Promise<void> {
    const online = last.filter((d) => d.status === 'online').length;
    if (online === 0) return;
    const now = this.clock.now();
    await this.store.transaction(async (trx) => {
      const renewed = await trx
        .updateTable('counter_devices')
        .set({ last_seen_at: now, presence_expires_at: now + ttlMs })
        .where('merchant_id', '=', scope.merchantId)
        .where('mode', '=', scope.mode)
        .where('agent_id', '=', agentId)
        .where('status', '=', 'online')
        .executeTakeFirst();
      if (Number(renewed.numUpdatedRows) < online) await this.#apply(trx, scope, agentId, ttlMs, last);
    });
  }

  /** The scope's devices, by agent name and the agent's name for the device. */
  async list(scope: Scope): Promise<Device[]> {
    const rows = await this.store.db
      .selectFrom('counter_devices')
      .innerJoin('agents', 'agents.id', 'counter_devices.agent_id')
      .selectAll('counter_devices')
      .select('agents.name as agent_name')
      .where('counter_devices.merchant_id', '=', scope.merchantId)
      .where('counter_devices.mode', '=', scope.mode)
      .orderBy('agents.name')
      .orderBy('counter_devices.agent_id')
      .orderBy('counter_devices.device_id')
      .execute();
    return rows.map(({ agent_name, ...row }) => presentDevice(row, agent_name));
  }
}

/** The earliest deadline of any online device (epoch ms), or undefined when none is online. */
export async function nextDeviceDeadline(db: Executor): Promise<number | undefined> {
  const row = await db
    .selectFrom('counter_devices')
    .select((eb) => eb.fn.min('presence_expires_at').as('at'))
    .where('status', '=', 'online')
    .executeTakeFirst();
  return row?.at ?? undefined;
}

/**
 * Online devices of a stopping agent, or whose presence lapsed before `before`, go offline, up to
 * `limit` of them. The update repeats the conditions: on PostgreSQL every instance's timer fires at
 * the same deadline, and a heartbeat may renew a device meanwhile.
 */
export async function expireDevices(trx: Trx, which: { agentId: string } | { before: number }, limit: number, now: number): Promise<{ scanned: number; expired: number }> {
  let query = trx.selectFrom('counter_devices').select('id').where('status', '=', 'online');
  query = 'agentId' in which ? query.where('agent_id', '=', which.agentId) : query.where('presence_expires_at', '<', which.before);
  const rows = await query.limit(limit).execute();
  if (rows.length === 0) return { scanned: 0, expired: 0 };
  let update = trx
    .updateTable('counter_devices')
    .set({ status: 'offline', presence_expires_at: null, last_error: 'agentId' in which ? AGENT_STOPPED : AGENT_OFFLINE, paper: null, cover_open: null, drawer_open: null, updated_at: now })
    .where('id', 'in', rows.map((r) => r.id))
    .where('status', '=', 'online');
  update = 'agentId' in which ? update.where('agent_id', '=', which.agentId) : update.where('presence_expires_at', '<', which.before);
  const result = await update.executeTakeFirst();
  return { scanned: rows.length, expired: Number(result.numUpdatedRows) };
}

import { type PresenceReader, type ReaderRef, UPSTREAM_PROTOCOL_VERSION } from '../../shared/agent-upstream.js';
import { toIsoOrNull, type Clock } from '../../shared/time.js';
import { followNotices, notifyOnCommit } from '../db/notify.js';
import type { AgentsTable, TerminalReadersTable } from '../db/schema.js';
import type { Store, Trx } from '../db/store.js';
import { conflict } from '../errors.js';
import { eventData, latestEventSeq, recordEvent } from '../webhooks/outbox.js';
import type { FieldCipher } from '../db/encryption.js';
import type { Scope } from '../accounts/scope.js';
import { AGENT_LIMITS, type AgentLimits } from './agent-limits.js';
import { expireDevices, nextDeviceDeadline } from './devices.js';
import { presentReader } from './readers.js';
import { readerIdentity } from './reader-view.js';

/**
 * A reader is declared offline after this many missed heartbeats when the server has no
 * `--presence-ttl-ms`: one lost heartbeat is a hiccup, three in a row is an agent that is gone.
 */
export const PRESENCE_TTL_HEARTBEATS = 3;

/** Readers expired per pass: a whole shop going dark at once is still handled in a few passes. */
const EXPIRE_BATCH = 500;

/** Transaction events pushed per read and connection; the next read continues after them. */
export const PUSH_BATCH = 200;

/** The error code of a hello refused because its key has as many agents as it may have. */
export const AGENT_LIMIT_REACHED = 'agent_limit_reached';

export interface AgentHello {
  agent_id: string;
  name: string;
  version: string;
  /** The upstream protocol it speaks (one of UPSTREAM_PROTOCOLS; default the current one). */
  protocol?: number;
  heartbeat_ms: number;
  cursor: number | null;
}

export interface TransactionEvent {
  seq: number;
  type: string;
  data: Record<string, unknown>;
}

function refKey(ref: ReaderRef): string {
  return ref.processor_terminal_id !== undefined ? `tmr:${ref.processor_terminal_id}` : `serial:${ref.serial_number ?? ''}`;
}

function presenceView(row: TerminalReadersTable): PresenceReader {
  return { ...readerIdentity(row), status: row.status, last_seen_at: toIsoOrNull(row.last_seen_at) };
}

/**
 * On-premise agents: who they are and the presence they report for readers (heartbeats and their
 * expiry). What readers do comes from the processor (reader-actions.ts) and reaches agents joined
 * with its payment (reader-view.ts).
 */
export class AgentService {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    /** Opens the payment events pushed to agents, sealed when they name a receipt email. */
    private readonly cipher: FieldCipher,
    /** The server's `--presence-ttl-ms`; without it each agent's own heartbeat interval decides. */
    private readonly presenceTtlMs?: number,
    readonly limits: AgentLimits = AGENT_LIMITS,
  ) {}

  ttlFor(heartbeatMs: number): number {
    return this.presenceTtlMs ?? PRESENCE_TTL_HEARTBEATS * heartbeatMs;
  }

  /**
   * An agent (re)connects with the key `keyId`: its row is made or refreshed; it must belong to the
   * key's merchant and mode, and an agent new to the key must fit under the key's agent limit.
   */
  async connect(scope: Scope, hello: AgentHello, keyId: string): Promise<{ agent: AgentsTable; cursor: number }> {
    const now = this.clock.now();
    return this.store.transaction(async (trx) => {
      const existing = await trx.selectFrom('agents').selectAll().where('id', '=', hello.agent_id).executeTakeFirst();
      if (existing && (existing.merchant_id !== scope.merchantId || existing.mode !== scope.mode)) {
        throw conflict('agent_id_in_use', 'This agent id belongs to another merchant or mode: start the agent with a fresh data dir');
      }
      if (existing?.api_key_id !== keyId) await this.#admitToKey(trx, keyId, hello.agent_id, now);
      const fields = { name: hello.name, version: hello.version, protocol: hello.protocol ?? UPSTREAM_PROTOCOL_VERSION, heartbeat_ms: hello.heartbeat_ms, connected_at: now, api_key_id: keyId };
      let agent: AgentsTable;
      if (existing) {
        await trx.updateTable('agents').set(fields).where('id', '=', existing.id).execute();
        agent = { ...existing, ...fields };
      } else {
        agent = { id: hello.agent_id, merchant_id: scope.merchantId, mode: scope.mode, ...fields, last_heartbeat_at: null, created_at: now };
        await trx.insertInto('agents').values(agent).execute();
      }
      const cursor = hello.cursor ?? (await latestEventSeq(trx, scope));
      return { agent, cursor };
    });
  }

  /** Refuses an agent new to `keyId` when the key already has its limit of agents heard from lately. */
  async #admitToKey(trx: Trx, keyId: string, agentId: string, now: number): Promise<void> {
    // Two hellos of one key on two PostgreSQL instances are counted one after the other (SQLite
    // runs one write transaction at a time anyway).
    if (this.store.dialect === 'postgres') await trx.selectFrom('api_keys').select('id').where('id', '=', keyId).forUpdate().execute();
    const since = now - this.limits.agentIdleMs;
    const row = await trx
      .selectFrom('agents')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('api_key_id', '=', keyId)
      .where('id', '!=', agentId)
      .where((eb) => eb.or([eb('connected_at', '>=', since), eb('last_heartbeat_at', '>=', since)]))
      .executeTakeFirst();
    const limit = this.limits.agentsPerKey;
    if (Number(row?.n ?? 0) >= limit) {
      throw conflict(
        AGENT_LIMIT_REACHED,
        `This API key already has ${limit} agents heard from in the last ${Math.round(this.limits.agentIdleMs / 86_400_000)} days, the most one key may have: give this PC its own counter key (pos keys create --preset counter), or start it with the data dir of the PC it replaces`,
      );
    }
  }

  /**
   * One heartbeat: every reader reported `online` is online until now + TTL, every one reported
   * `offline` is offline now; a change of status is a `terminal.reader.*` event. Answers with the
   * server's view of those readers and the references it has no reader for.
   */
  async heartbeat(scope: Scope, agentId: string, heartbeatMs: number, readers: readonly { reader: ReaderRef; status: 'online' | 'offline' }[]): Promise<{ readers: PresenceReader[]; unknown: ReaderRef[] }> {
    const now = this.clock.now();
    const expiresAt = now + this.ttlFor(heartbeatMs);
    return this.store.transaction(async (trx) => {
      const tmrIds = readers.flatMap((r) => (r.reader.processor_terminal_id !== undefined ? [r.reader.processor_terminal_id] : []));
      const serials = readers.flatMap((r) => (r.reader.processor_terminal_id === undefined && r.reader.serial_number !== undefined ? [r.reader.serial_number] : []));
      const rows =
        tmrIds.length + serials.length === 0
          ? []
          : await trx
              .selectFrom('terminal_readers')
              .selectAll()
              .where('merchant_id', '=', scope.merchantId)
              .where('mode', '=', scope.mode)
              .where((eb) => {
                const ors = [];
                if (tmrIds.length) ors.push(eb('processor_reader_id', 'in', tmrIds));
                if (serials.length) ors.push(eb('serial_number', 'in', serials));
                return eb.or(ors);
              })
              .execute();
      const byRef = new Map<string, TerminalReadersTable>();
      for (const row of rows) {
        byRef.set(`tmr:${row.processor_reader_id}`, row);
        byRef.set(`serial:${row.serial_number}`, row);
      }
      const online: TerminalReadersTable[] = [];
      const offline: TerminalReadersTable[] = [];
      const unknown: ReaderRef[] = [];
      const seen = new Set<string>();
      for (const r of readers) {
        const row = byRef.get(refKey(r.reader));
        if (!row) {
          unknown.push(r.reader);
          continue;
        }
        if (seen.has(row.id)) continue;
        seen.add(row.id);
        (r.status === 'online' ? online : offline).push(row);
      }
      const after: TerminalReadersTable[] = [];
      if (online.length) {
        await trx
          .updateTable('terminal_readers')
          .set({ status: 'online', status_source: 'agent', agent_id: agentId, last_seen_at: now, presence_expires_at: expiresAt })
          .where('id', 'in', online.map((r) => r.id))
          .execute();
        for (const row of online) {
          const next: TerminalReadersTable = { ...row, status: 'online', status_source: 'agent', agent_id: agentId, last_seen_at: now, presence_expires_at: expiresAt };
          if (row.status !== 'online') await this.#presenceEvent(trx, next, now);
          after.push(next);
        }
        // Deadlines that only moved later need no one's attention: a pass set for an earlier one
        // finds nothing and looks up the next. A new or earlier one must reach every expiry timer.
        if (online.some((row) => row.status !== 'online' || row.presence_expires_at === null || expiresAt < row.presence_expires_at)) {
          notifyOnCommit(trx, { topic: 'presence' });
        }
      }
      if (offline.length) {
        await trx
          .updateTable('terminal_readers')
          .set({ status: 'offline', status_source: 'agent', agent_id: agentId, presence_expires_at: null })
          .where('id', 'in', offline.map((r) => r.id))
          .execute();
        for (const row of offline) {
          const next: TerminalReadersTable = { ...row, status: 'offline', status_source: 'agent', agent_id: agentId, presence_expires_at: null };
          if (row.status !== 'offline') await this.#presenceEvent(trx, next, now);
          after.push(next);
        }
      }
      await trx.updateTable('agents').set({ last_heartbeat_at: now }).where('id', '=', agentId).execute();
      return { readers: after.map(presenceView), unknown };
    });
  }

  #presenceEvent(trx: Trx, row: TerminalReadersTable, now: number): Promise<string> {
    const type = row.status === 'online' ? 'terminal.reader.online' : 'terminal.reader.offline';
    return recordEvent(trx, { merchantId: row.merchant_id, mode: row.mode }, type, row.id, { ...presentReader(row), agent_id: row.agent_id }, now);
  }

  /** The agent stops on purpose: the readers and devices it reported go offline now. */
  async goodbye(agentId: string): Promise<number> {
    const readers = (await this.#expire({ agentId })).expired;
    const devices = await this.store.transaction((trx) => expireDevices(trx, { agentId }, EXPIRE_BATCH, this.clock.now()));
    return readers + devices.expired;
  }

  /**
   * Readers and counter devices whose agent-reported presence lapsed go offline, all of them (in
   * batches). Run when the earliest deadline passes (server/terminal/presence-expiry.ts); after a
   * server restart the stored deadlines decide, so nothing is marked offline early or kept online forever.
   */
  async expire(): Promise<number> {
    let expired = 0;
    for (;;) {
      const pass = await this.#expire({ before: this.clock.now() });
      expired += pass.expired;
      if (pass.scanned < EXPIRE_BATCH) break;
    }
    for (;;) {
      const now = this.clock.now();
      const pass = await this.store.transaction((trx) => expireDevices(trx, { before: now }, EXPIRE_BATCH, now));
      expired += pass.expired;
      if (pass.scanned < EXPIRE_BATCH) return expired;
    }
  }

  /** The earliest deadline of any agent-reported online reader or device (epoch ms), or undefined when none is online. */
  async nextPresenceDeadline(): Promise<number | undefined> {
    const row = await this.store.db
      .selectFrom('terminal_readers')
      .select((eb) => eb.fn.min('presence_expires_at').as('at'))
      .where('status_source', '=', 'agent')
      .where('status', '=', 'online')
      .executeTakeFirst();
    const readers = row?.at ?? undefined;
    const devices = await nextDeviceDeadline(this.store.db);
    if (readers === undefined || readers === null) return devices;
    if (devices === undefined || devices === null) return readers;
    return Math.min(Number(readers), Number(devices));
  }

  async #expire(which: { agentId: string } | { before: number }): Promise<{ scanned: number; expired: number }> {
    const now = this.clock.now();
    return this.store.transaction(async (trx) => {
      let query = trx.selectFrom('terminal_readers').selectAll().where('status_source', '=', 'agent').where('status', '=', 'online');
      query = 'agentId' in which ? query.where('agent_id', '=', which.agentId) : query.where('presence_expires_at', '<', which.before);
      const rows = await query.limit(EXPIRE_BATCH).execute();
      if (rows.length === 0) return { scanned: 0, expired: 0 };
      // The same conditions again: on PostgreSQL every instance's timer fires at the same deadline,
      // and a heartbeat may renew a reader meanwhile; a row goes offline, with its event, only
      // for the update that still finds it lapsed.
      let update = trx
        .updateTable('terminal_readers')
        .set({ status: 'offline', presence_expires_at: null })
        .where('id', 'in', rows.map((r) => r.id))
        .where('status_source', '=', 'agent')
        .where('status', '=', 'online');
      update = 'agentId' in which ? update.where('agent_id', '=', which.agentId) : update.where('presence_expires_at', '<', which.before);
      const changed = new Set((await update.returning('id').execute()).map((r) => r.id));
      for (const row of rows) if (changed.has(row.id)) await this.#presenceEvent(trx, { ...row, status: 'offline', presence_expires_at: null }, now);
      return { scanned: rows.length, expired: changed.size };
    });
  }

  /**
   * Follows the scope's payment events after `cursor` for a connected agent: `deliver` gets them in
   * order with the cursor to resume after, now and after each commit that wrote events; nothing is
   * read while nothing is written. `failed` hears of a read that failed; it is retried. Returns stop.
   */
  followTransactionEvents(scope: Scope, cursor: number, deliver: (events: TransactionEvent[], scanned: number) => void, failed: (error: unknown) => void): () => void {
    let at = cursor;
    return followNotices(
      this.store.notifications,
      { topic: 'events', merchantId: scope.merchantId, mode: scope.mode },
      async () => {
        const { events, scanned, full } = await this.transactionEventsAfter(scope, at);
        if (scanned === at) return false;
        at = scanned;
        deliver(events, scanned);
        return full;
      },
      failed,
    );
  }

  /**
   * Payment events of the merchant and mode after `cursor`, oldest first; `scanned` is the last seq
   * looked at, `full` whether the read stopped at `limit` (more may follow).
   */
  async transactionEventsAfter(scope: Scope, cursor: number, limit = PUSH_BATCH): Promise<{ events: TransactionEvent[]; scanned: number; full: boolean }> {
    const rows = await this.store.db
      .selectFrom('events')
      .select(['id', 'seq', 'type', 'data'])
      .where('merchant_id', '=', scope.merchantId)
      .where('mode', '=', scope.mode)
      .where('seq', '>', cursor)
      .orderBy('seq')
      .limit(limit)
      .execute();
    const events = rows.filter((r) => r.type.startsWith('payment.')).map((r) => ({ seq: r.seq, type: r.type, data: eventData(this.cipher, r) }));
    return { events, scanned: rows.length ? rows[rows.length - 1]!.seq : cursor, full: rows.length === limit };
  }
}

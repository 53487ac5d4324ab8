import { sql } from 'kysely';
import { newReference } from '../../shared/ids.js';
import { insertRow, Prepared } from '../db/prepared.js';
import type { Mode } from '../db/schema.js';
import type { Executor, Trx } from '../db/store.js';
import { nextSeq } from '../db/counters.js';
import { notifyOnCommit } from '../db/notify.js';
import { packJson, unpackJson } from '../db/packed-json.js';
import type { FieldCipher } from '../db/encryption.js';
import type { Scope } from '../accounts/scope.js';
import { originOf } from '../audit/origin.js';

import type { EventType } from '../../shared/contract/event-types.js';

export { EVENT_TYPES, type EventType } from '../../shared/contract/event-types.js';

/**
 * An event's mode is what its data says (spec §6.6): `is_test` true or false. Events stored
 * without it (spec §6.6: some delivered before 2026-08-31) are of unknown mode, never live.
 */
export function eventMode(data: Record<string, unknown>): 'test' | 'live' | 'unknown' {
  if (data.is_test === true) return 'test';
  if (data.is_test === false) return 'live';
  return 'unknown';
}

/**
 * Moves the merchant's and mode's webhook fan-out cursor past an event no endpoint can want: while
 * the merchant has no active endpoint in the mode, and the fan-out has seen every event before
 * this one. Done in the event's own transaction, it spares the webhook worker a transaction (and
 * its commit) per event of the many merchants that never registered an endpoint. An endpoint made
 * later starts after the events written before it (docs/webhooks.md), so none of these is owed to
 * it; with a backlog still to fan out, or an endpoint listening, the worker's fan-out decides as
 * before (server/webhooks/queue.ts). A scope whose cursor the worker has not made yet is left to it.
 */
const skipUnwatchedEvent = new Prepared<{ merchantId: string; mode: Mode; seq: number; previous: number }, never>((db, arg) =>
  db
    .updateTable('webhook_cursors')
    .set({ last_seq: arg('seq') })
    .where('merchant_id', '=', arg('merchantId'))
    .where('mode', '=', arg('mode'))
    .where('last_seq', '=', arg('previous'))
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('webhook_endpoints')
            .select(sql.lit(1).as('one'))
            .where('merchant_id', '=', arg('merchantId'))
            .where('mode', '=', arg('mode'))
            .where('status', '=', sql.lit('active'))
            .where('deleted_at', 'is', null),
        ),
      ),
    ),
);

/**
 * The data text of the events this process wrote lately, by event id, up to this many characters
 * in all (the oldest dropped first): the webhook worker reads each event moments after it was
 * written, mostly in the same process, and inflating it again cost it as much per delivery as
 * storing the delivery's outcome. 8 M characters hold the last few thousand payments' events. An
 * event written by another process, or longer ago, is read from its row as before; one whose
 * transaction rolled back is never asked for, its id being used by nothing else. Sealed data is
 * not kept: in the clear it stays no longer than its request.
 */
const RECENT_TEXT_CHARS = 8 * 1024 * 1024;
const recentTexts = new Map<string, string>();
let recentChars = 0;

function rememberText(id: string, text: string): void {
  recentTexts.set(id, text);
  recentChars += text.length;
  for (const [oldest, dropped] of recentTexts) {
    if (recentChars <= RECENT_TEXT_CHARS) break;
    recentTexts.delete(oldest);
    recentChars -= dropped.length;
  }
}

/**
 * Writes an event into the outbox inside the caller's transaction: the event exists if and only
 * if the state change it describes was committed. Its commit wakes whoever follows the merchant's
 * events (event streams, agents): every event goes through here, so nobody needs to poll. The
 * request behind the change (its Request-Id and Idempotency-Key) comes from the scope or, for a
 * unit the idempotency engine runs for a request, from the unit itself (server/audit/origin.ts);
 * the processor's news and background work have none. Data that holds a customer's details (a
 * customer, a payment's receipt email) is sealed: the caller, who knows, passes `seal`.
 */
export async function recordEvent(trx: Trx, scope: Scope, type: EventType, objectId: string, data: Record<string, unknown>, now: number, options: { seal?: FieldCipher | undefined } = {}): Promise<string> {
  const id = newReference('event');
  const seq = await nextSeq(trx, scope.merchantId, scope.mode, 'events');
  const origin = originOf(trx, scope);
  // Packed, then sealed: sealed text does not compress (server/db/packed-json.ts).
  const json = JSON.stringify({ ...data, is_test: scope.mode === 'test' });
  const text = packJson(json);
  await insertRow(trx, 'events', {
    id,
    merchant_id: scope.merchantId,
    mode: scope.mode,
    seq,
    type,
    object_id: objectId,
    data: options.seal ? options.seal.seal('events.data', id, text) : text,
    created_at: now,
    request_id: origin?.requestId ?? null,
    idempotency_key: origin?.idempotencyKey ?? null,
  });
  if (!options.seal) rememberText(id, json);
  const skipped = await skipUnwatchedEvent.affected(trx, { merchantId: scope.merchantId, mode: scope.mode, seq, previous: seq - 1 });
  notifyOnCommit(trx, { topic: 'events', merchantId: scope.merchantId, mode: scope.mode });
  // The webhook worker is woken only for an event its fan-out has yet to see: one already past the
  // cursor has no endpoint to go to, and waking it would cost its queries at every commit.
  if (skipped === 0) notifyOnCommit(trx, { topic: 'webhook_fanout' });
  return id;
}

/** An event's data as JSON text, opened if it was sealed. */
export function eventDataText(cipher: FieldCipher, row: { id: string; data: string }): string {
  return recentTexts.get(row.id) ?? unpackJson(cipher.open('events.data', row.id, row.data));
}

/** An event's data, opened if it was sealed. */
export function eventData(cipher: FieldCipher, row: { id: string; data: string }): Record<string, unknown> {
  return JSON.parse(eventDataText(cipher, row)) as Record<string, unknown>;
}

/** An event's `request`, as Stripe's events carry it: both null for what no /v1 request caused. */
export function eventRequest(row: { request_id: string | null; idempotency_key: string | null }): { id: string | null; idempotency_key: string | null } {
  return { id: row.request_id ?? null, idempotency_key: row.idempotency_key ?? null };
}

/** The seq of the scope's newest event (0 before its first): where a follower that wants only what comes next starts. */
export async function latestEventSeq(db: Executor, scope: Scope): Promise<number> {
  const row = await db
    .selectFrom('events')
    .select('seq')
    .where('merchant_id', '=', scope.merchantId)
    .where('mode', '=', scope.mode)
    .orderBy('seq', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row ? Number(row.seq) : 0;
}

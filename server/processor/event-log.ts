import type { Clock } from '../../shared/time.js';
import type { Mode } from '../db/schema.js';
import type { Executor, Store } from '../db/store.js';
import type { ProcessorEvent } from './snapshots.js';

function objectId(event: ProcessorEvent): string | null {
  const subject = event.subject;
  switch (subject.kind) {
    case 'payment':
      return subject.payment.id;
    case 'refund':
      return subject.refund.id;
    case 'reader':
      return subject.reader.id;
    default:
      return subject.id || null;
  }
}

/** The processor events already applied, so that a redelivered event is acknowledged, not applied again. */
export class ProcessorEventLog {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
  ) {}

  async seen(id: string): Promise<boolean> {
    return (await this.store.db.selectFrom('processor_events').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
  }

  async record(event: ProcessorEvent, mode: Mode): Promise<void> {
    const row = { id: event.id, mode, type: event.type, object_id: objectId(event), received_at: this.clock.now() };
    const insert = (db: Executor) => db.insertInto('processor_events').values(row).onConflict((oc) => oc.column('id').doNothing()).execute();
    // On SQLite a write outside a unit is a commit of its own, whose fsync blocks the event loop
    // (better-sqlite3 is synchronous); as a unit it shares the group commit of the writes around
    // it. On PostgreSQL the lone INSERT is already one round trip, and a transaction would add two.
    if (this.store.dialect === 'sqlite') await this.store.transaction(insert);
    else await insert(this.store.db);
  }
}

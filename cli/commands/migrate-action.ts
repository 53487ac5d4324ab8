import { loadStoreConfig } from '../../shared/config.js';
import { POS_VERSION } from '../../shared/version.js';
import { toIsoTimestamp } from '../../shared/time.js';
import { DatabaseTooNewError, migrationState, openStore, type Store } from '../../server/db/store.js';
import type { CliIo } from '../io.js';
import { createOutput, warnOn } from '../output.js';

interface StoreFlags {
  dataDir?: string;
  databaseUrl?: string;
  databaseSchema?: string;
  json?: boolean;
}

async function withStore<T>(flags: StoreFlags, io: CliIo, migrate: boolean, work: (store: Store, schema: string | undefined) => Promise<T>): Promise<T> {
  const config = loadStoreConfig(flags, io.env);
  const store = await openStore({ ...config, migrate }, { onLooseFile: warnOn(io.stderr) });
  try {
    return await work(store, config.databaseUrl ? (config.databaseSchema ?? 'public') : undefined);
  } finally {
    await store.close();
  }
}

/** `pos migrate status`: what the database holds against what this version knows, changing nothing. */
export async function migrateStatusAction(options: StoreFlags, io: CliIo): Promise<void> {
  const out = createOutput({ json: Boolean(options.json) }, io);
  const state = await withStore(options, io, false, (store, schema) => migrationState(store.db, schema));
  const newest = state.versions.at(-1);
  if (out.json) {
    out.printJson({
      version: POS_VERSION,
      applied: state.applied.map((m) => ({ name: m.name, applied_at: m.appliedAt })),
      pending: state.pending,
      unknown: state.unknown,
      migrated_by: state.versions.map((v) => ({ version: v.version, migrated_at: toIsoTimestamp(v.migratedAt), last_migration: v.lastMigration })),
    });
  } else {
    out.table([
      ...state.applied.map((m) => ({ migration: m.name, status: state.unknown.includes(m.name) ? 'applied (unknown to this version)' : 'applied', applied_at: m.appliedAt })),
      ...state.pending.map((name) => ({ migration: name, status: 'pending', applied_at: '' })),
    ]);
    out.line();
    out.line(`${state.applied.length} applied, ${state.pending.length} pending; this is pos ${POS_VERSION}${newest ? `, last migrated by pos ${newest.version}` : ''}.`);
    if (state.pending.length > 0 && state.unknown.length === 0) out.line('`pos migrate up` (or starting the server) applies the pending ones.');
  }
  if (state.unknown.length > 0) throw new DatabaseTooNewError(newest?.version, state.unknown);
}

/** `pos migrate up`: applies what is pending, as a server would as it starts. */
export async function migrateUpAction(options: StoreFlags, io: CliIo): Promise<void> {
  const out = createOutput({ json: Boolean(options.json) }, io);
  const report = await withStore(options, io, true, async (store) => store.migrations);
  const appliedNow = report?.appliedNow ?? [];
  if (out.json) {
    out.printJson({ version: POS_VERSION, applied_now: appliedNow, applied: report?.applied ?? 0, pending: [] });
    return;
  }
  out.line(appliedNow.length === 0 ? `Nothing to apply: the database has all ${report?.applied ?? 0} migrations of pos ${POS_VERSION}.` : `Applied ${appliedNow.length}: ${appliedNow.join(', ')}.`);
}

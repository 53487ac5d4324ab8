import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { privateDir, privateSqliteFile, type LooseFileReport } from '../shared/files.js';
import type { DrawerOpening, LocationPolicy } from '../shared/agent-upstream.js';

/**
 * Drawer openings kept until the server has them in its audit trail. A shop opens its drawer a few
 * hundred times a day; 5,000 is days of being offline. Past it the oldest are dropped and counted:
 * the agent keeps working without a server, and the count says how many the trail misses.
 */
export const MAX_QUEUED_DRAWER_OPENINGS = 5_000;

/**
 * Changes that can be redone (the reader registry, the event cursor) are written after this long,
 * so a burst of changes on 200 readers is one commit; queues are committed before the call returns.
 */
const WRITE_COALESCE_MS = 100;

/** A writer holding the file (a second agent on the same data dir) is waited for this long. */
const BUSY_TIMEOUT_MS = 5_000;

export interface RegistryEntry {
  /** How the agent names the reader: `tmr_…` or `serial:<serial number>`. */
  key: string;
  driver: 'processor' | 'serial' | 'simulated';
  id: string | null;
  processor_terminal_id: string;
  name: string;
  serial_number: string | null;
  /** The terminal location it stands at; absent in files written by older agents. */
  location_id?: string | null;
  last_seen_at: string | null;
}

/** A receipt waiting for the printer (agent/devices/printer.ts). */
export interface PrintJob {
  id: string;
  /** `receipt:<transaction id>:<copy>`; a reprint adds `:reprint:<request id>` so it is its own job. */
  key: string;
  transaction_id: string;
  copy: 'customer' | 'merchant';
  /** The ESC/POS bytes, base64; null until the transaction could be read from the server. */
  bytes: string | null;
  created_at: string;
}

export interface AgentData {
  agent_id: string;
  /** The last transaction event seq received: pushes resume after it. */
  cursor: number | null;
  merchant: { id: string; business_name: string } | null;
  /** tmr_ ids of the simulated readers this agent registered (`--simulate N`), oldest first. */
  simulated: string[];
  readers: RegistryEntry[];
  /** Receipts not printed yet, oldest first: kept until the printer took them whole. */
  print_queue: PrintJob[];
  /** Keys of receipts printed, newest last (bounded): none is printed twice. */
  printed_keys: string[];
  /** The merchant's locations and their receipt policies, as the server last pushed them. */
  locations: LocationPolicy[];
  /** Drawer openings the server has not acknowledged yet, oldest first. */
  drawer_openings: DrawerOpening[];
  dropped_drawer_openings: number;
}

/** A cash sale taken while the server was out of reach, in the order taken (agent/offline-sales.ts). */
export interface OfflineSale {
  /** Its place in the queue: sales sync in this order. */
  seq: number;
  /** Printed on its receipt until it syncs: OFF-<agent>-<seq>. */
  local_reference: string;
  /** The key it is recorded with on the server: a retry after a lost answer is the same sale. */
  idempotency_key: string;
  /** The POST /v1/transactions body, JSON. */
  request: string;
  taken_at: number;
  status: 'queued' | 'synced' | 'refused';
  transaction_id: string | null;
  /** Why the server refused it for good (a refused sale is kept, and shown, not retried). */
  error: string | null;
}

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS state (key TEXT PRIMARY KEY, value TEXT NOT NULL);
  CREATE TABLE IF NOT EXISTS offline_sales (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    local_reference TEXT NOT NULL UNIQUE,
    idempotency_key TEXT NOT NULL UNIQUE,
    request TEXT NOT NULL,
    taken_at INTEGER NOT NULL,
    status TEXT NOT NULL DEFAULT 'queued',
    transaction_id TEXT,
    error TEXT,
    synced_at INTEGER
  );
  CREATE INDEX IF NOT EXISTS offline_sales_status ON offline_sales (status, seq);
`;

/**
 * The agent's own state in `<data dir>/agent.db` (SQLite, `synchronous=FULL`: a commit is on disk
 * before the call returns, through a power cut): identity, reader registry, print and drawer
 * queues as one row each, and the offline sales in their own table. A data dir of an older agent
 * (`agent.json`, lowdb) is taken over once.
 */
export class AgentState {
  #timer: NodeJS.Timeout | undefined;
  /** What each key held at its last commit: unchanged keys are not written again. */
  readonly #written = new Map<string, string>();
  readonly #writeRow: Database.Statement<[string, string]>;

  private constructor(
    readonly db: Database.Database,
    private readonly current: AgentData,
  ) {
    this.#writeRow = db.prepare('INSERT INTO state (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value');
  }

  /** `onLooseFile` hears of the dir or state files found open to other users (tightened if ours). */
  static async open(dataDir: string, onLooseFile?: LooseFileReport): Promise<AgentState> {
    // The agent's key is not here, but its queues are: receipts waiting for the printer (amounts,
    // card brand and last four), drawer openings and offline sales. Owner-only, side files included.
    privateDir(dataDir, onLooseFile);
    const file = join(dataDir, 'agent.db');
    privateSqliteFile(file, onLooseFile);
    const db = new Database(file);
    db.pragma('journal_mode = WAL');
    // The bundled build defaults to NORMAL in WAL mode, which can lose a commit on power loss: an
    // offline cash sale is money in the drawer the books know of only here.
    db.pragma('synchronous = FULL');
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    db.exec(SCHEMA);
    const defaults: AgentData = {
      agent_id: randomUUID(),
      cursor: null,
      merchant: null,
      simulated: [],
      readers: [],
      print_queue: [],
      printed_keys: [],
      locations: [],
      drawer_openings: [],
      dropped_drawer_openings: 0,
    };
    const rows = db.prepare('SELECT key, value FROM state').all() as { key: string; value: string }[];
    const stored: Record<string, unknown> = Object.fromEntries(rows.map((r) => [r.key, JSON.parse(r.value) as unknown]));
    const legacy = join(dataDir, 'agent.json');
    let imported = false;
    if (!('agent_id' in stored) && existsSync(legacy)) {
      // An older agent's lowdb file: its identity and queues carry over, and the report queue it kept
      // (the server no longer takes reports) is left out.
      const { queue: _queue, next_report_seq: _next, dropped_reports: _dropped, ...kept } = JSON.parse(readFileSync(legacy, 'utf8')) as Partial<AgentData> & Record<string, unknown>;
      Object.assign(stored, kept);
      imported = true;
    }
    const data = { ...defaults } as AgentData;
    for (const key of Object.keys(defaults) as (keyof AgentData)[]) {
      if (key in stored) (data as unknown as Record<string, unknown>)[key] = stored[key];
    }
    const state = new AgentState(db, data);
    // What the file holds already is not written again; what came from agent.json is.
    for (const row of rows) state.#written.set(row.key, row.value);
    state.#commit();
    // Only once its contents are committed here does the old file go: a crash between leaves both, and the next start takes it over again.
    if (imported) unlinkSync(legacy);
    return state;
  }

  get data(): AgentData {
    return this.current;
  }

  /** Writes every changed key in one transaction. */
  #commit(): void {
    const changed: [string, string][] = [];
    for (const [key, value] of Object.entries(this.current)) {
      const json = JSON.stringify(value);
      if (this.#written.get(key) !== json) changed.push([key, json]);
    }
    if (!changed.length) return;
    this.db.transaction(() => {
      for (const [key, json] of changed) this.#writeRow.run(key, json);
    })();
    for (const [key, json] of changed) this.#written.set(key, json);
  }

  /** Keeps a drawer opening until the server acknowledges it, written at once: an opening must survive a crash. */
  async enqueueDrawerOpening(opening: DrawerOpening): Promise<void> {
    const queue = this.current.drawer_openings;
    queue.push(opening);
    const excess = queue.length - MAX_QUEUED_DRAWER_OPENINGS;
    if (excess > 0) {
      queue.splice(0, excess);
      this.current.dropped_drawer_openings += excess;
    }
    await this.persist();
  }

  /** The server has these openings in its audit trail. */
  acknowledgeDrawerOpenings(ids: readonly string[]): void {
    const done = new Set(ids);
    const before = this.current.drawer_openings.length;
    this.current.drawer_openings = this.current.drawer_openings.filter((o) => !done.has(o.id));
    if (this.current.drawer_openings.length !== before) this.save();
  }

  /** A change that can be redone: committed shortly, with whatever else changes meanwhile. */
  save(): void {
    this.#timer ??= setTimeout(() => {
      this.#timer = undefined;
      this.#commit();
    }, WRITE_COALESCE_MS);
  }

  /** Commits the state now: for changes that must survive a crash (the print queue). */
  async persist(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#commit();
  }

  async flush(): Promise<void> {
    await this.persist();
  }

  /** Commits what is pending and closes the file; the state is unusable after. */
  async close(): Promise<void> {
    await this.persist();
    this.db.close();
  }
}

import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { Low } from 'lowdb';
import { checkPrivate, PrivateJsonFile, privateDir, type LooseFileReport } from '../shared/files.js';
import type { DrawerOpening, LocationPolicy } from '../shared/agent-upstream.js';

/**
 * Drawer openings kept until the server has them in its audit trail. A shop opens its drawer a few
 * hundred times a day; 5,000 is days of being offline. Past it the oldest are dropped and counted:
 * the agent keeps working without a server, and the count says how many the trail misses.
 */
export const MAX_QUEUED_DRAWER_OPENINGS = 5_000;

/**
 * Writes are coalesced for this long: a burst of changes on 200 readers is one file write, and a
 * SIGKILL loses at most this much of the queue.
 */
const WRITE_COALESCE_MS = 100;

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

/** The agent's own state in `<data dir>/agent.json` (lowdb): identity, reader registry, print and drawer queues. */
export class AgentState {
  #timer: NodeJS.Timeout | undefined;
  #writing: Promise<void> = Promise.resolve();

  private constructor(private readonly db: Low<AgentData>) {}

  /** `onLooseFile` hears of the dir or state file found open to other users (tightened if ours). */
  static async open(dataDir: string, onLooseFile?: LooseFileReport): Promise<AgentState> {
    // The agent's key is not here, but its queues are: receipts waiting for the printer (amounts,
    // card brand and last four) and drawer openings. Owner-only, every rewrite included.
    const file = join(dataDir, 'agent.json');
    privateDir(dataDir, onLooseFile);
    checkPrivate(file, onLooseFile);
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
    // Not JSONFilePreset, which keeps everything in memory when NODE_ENV is `test`, nor lowdb's
    // JSONFile, whose every write makes the file anew with the umask's mode.
    const db = new Low<AgentData>(new PrivateJsonFile<AgentData>(file), defaults);
    await db.read();
    // Fill fields a file written by an older agent lacks, and leave out the report queue it kept
    // (the server no longer takes reports: it pushes each reader with its payment).
    const { queue: _queue, next_report_seq: _next, dropped_reports: _dropped, ...kept } = db.data as AgentData & { queue?: unknown; next_report_seq?: unknown; dropped_reports?: unknown };
    db.data = { ...defaults, ...kept };
    await db.write();
    return new AgentState(db);
  }

  get data(): AgentData {
    return this.db.data;
  }

  /** Keeps a drawer opening until the server acknowledges it, written at once: an opening must survive a crash. */
  async enqueueDrawerOpening(opening: DrawerOpening): Promise<void> {
    const queue = this.db.data.drawer_openings;
    queue.push(opening);
    const excess = queue.length - MAX_QUEUED_DRAWER_OPENINGS;
    if (excess > 0) {
      queue.splice(0, excess);
      this.db.data.dropped_drawer_openings += excess;
    }
    await this.persist();
  }

  /** The server has these openings in its audit trail. */
  acknowledgeDrawerOpenings(ids: readonly string[]): void {
    const done = new Set(ids);
    const before = this.db.data.drawer_openings.length;
    this.db.data.drawer_openings = this.db.data.drawer_openings.filter((o) => !done.has(o.id));
    if (this.db.data.drawer_openings.length !== before) this.save();
  }

  save(): void {
    this.#timer ??= setTimeout(() => {
      this.#timer = undefined;
      this.#writing = this.#writing.then(() => this.db.write()).catch(() => undefined);
    }, WRITE_COALESCE_MS);
  }

  /** Writes the state now and waits for it: for changes that must survive a crash (the print queue). */
  async persist(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#writing = this.#writing.catch(() => undefined).then(() => this.db.write());
    await this.#writing;
  }

  async flush(): Promise<void> {
    if (this.#timer) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
      this.#writing = this.#writing.then(() => this.db.write());
    }
    await this.#writing;
  }
}

import type { LocationPolicy } from '../shared/agent-upstream.js';
import { DEFAULT_RECEIPT_POLICY, type ReceiptPolicy } from '../shared/receipt-policy.js';
import type { ReaderBook } from './readers.js';
import type { AgentState } from './state.js';

/**
 * Which receipt policy applies where (docs/counter-hardware.md, "Receipts"). `--receipts` given on
 * the agent overrides every location; otherwise a reader's approvals follow the policy of the
 * location the reader stands at, as the server pushes it (`locations`, after the welcome and on
 * every change, kept in the state file so a restart without the server keeps the last word).
 * Anything not known yet (no push since the reader appeared) is `always`, the server's default.
 */
export class ReceiptPolicies {
  constructor(
    private readonly override: ReceiptPolicy | undefined,
    private readonly state: AgentState,
    private readonly book: ReaderBook,
  ) {}

  /** The server's list of locations; true when any policy or location differs from what was known. */
  setLocations(locations: readonly LocationPolicy[]): boolean {
    const before = JSON.stringify(this.state.data.locations);
    const next = locations.map((l) => ({ id: l.id, display_name: l.display_name, receipt_policy: l.receipt_policy }));
    if (JSON.stringify(next) === before) return false;
    this.state.data.locations = next;
    this.state.save();
    return true;
  }

  #ofLocation(id: string | null | undefined): ReceiptPolicy {
    return this.state.data.locations.find((l) => l.id === id)?.receipt_policy ?? DEFAULT_RECEIPT_POLICY;
  }

  /** For an approval on the reader with this book key. */
  forReader(key: string): ReceiptPolicy {
    return this.override ?? this.#ofLocation(this.book.info(key)?.location_id);
  }

  /**
   * For a cash sale: the location of the counter's reader when the counter names one; otherwise the
   * location the agent's readers stand at when they all stand at one, else the merchant's first
   * location (where readers register by default).
   */
  forSale(reader?: string): ReceiptPolicy {
    if (this.override) return this.override;
    const key = reader === undefined ? undefined : this.book.find(reader);
    if (key !== undefined) return this.forReader(key);
    const places = new Set(this.book.keys().flatMap((k) => this.book.info(k)?.location_id ?? []));
    if (places.size === 1) return this.#ofLocation([...places][0]);
    return this.state.data.locations[0]?.receipt_policy ?? DEFAULT_RECEIPT_POLICY;
  }
}

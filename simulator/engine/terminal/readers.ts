import { randomUUID } from 'node:crypto';
import type Stripe from 'stripe';
import { newId } from '../../ids.js';
import { SimError, invalidRequest, missingParam } from '../../errors.js';
import type { Scope, StoredObject } from '../../store.js';
import { type Kernel, type Origin } from '../kernel.js';
import { list, type ListEnvelope, type Metadata, mergeMetadata } from '../shapes.js';
import { displayLines } from './display.js';
import {
  type CartDisplay,
  type CartInput,
  IDLE_DISPLAY,
  type ReaderCreateInput,
  type ReaderDisplay,
  type ReaderInternal,
  type ScriptedOutcome,
  anyReader,
  busy,
  findReader,
  isDeleted,
  offline,
} from './types.js';

/**
 * Terminal readers: registration, their screen (a cart shown by `set_reader_display`, the tip
 * selection the customer answers) and what the control API does to the device itself (unplugging
 * it, scripting the next cards' outcomes). Payments on a reader are readerActions.ts's.
 */

const SIMULATED_CODES: Record<string, Stripe.Terminal.Reader.DeviceType> = {
  'simulated-wpe': 'simulated_wisepos_e',
  'simulated-s700': 'simulated_stripe_s700',
  'simulated-s710': 'simulated_stripe_s710',
};

/** Stripe's limit on a cart line's description (`cart[line_items][][description]`, maxLength 5000). */
const MAX_LINE_DESCRIPTION = 5000;
/** A custom tip typed on the reader: Stripe's largest amount (99,999,999 minor units). */
const MAX_CUSTOM_TIP = 99_999_999;

export class Readers {
  constructor(private readonly kernel: Kernel) {}

  registerReader(scope: Scope, input: ReaderCreateInput): Stripe.Terminal.Reader {
    const code = input.registration_code;
    // Own keys only: a code such as `valueOf` or `constructor` must not find Object.prototype.
    const simulated = Object.hasOwn(SIMULATED_CODES, code) ? SIMULATED_CODES[code] : undefined;
    if (simulated && scope.livemode) {
      throw invalidRequest(
        `The registration code '${code}' registers a simulated reader, which is only available in test mode. Use the code displayed on a physical reader to register it in live mode.`,
        'registration_code',
        'parameter_invalid',
      );
    }
    if (!simulated && !scope.livemode) {
      throw invalidRequest(
        `The registration code '${code}' is invalid. In test mode, register a simulated reader with 'simulated-wpe' or 'simulated-s700'.`,
        'registration_code',
        'parameter_invalid',
      );
    }
    let location: string | null = null;
    if (input.location === undefined) {
      if (simulated) throw invalidRequest('A location is required to register a simulated reader: pass `location` (a terminal location in the same mode).', 'location', 'parameter_missing');
    } else {
      const found = this.kernel.store.find<Stripe.Terminal.Location, Record<string, never>>(input.location);
      if (!found || found.type !== 'terminal.location' || found.livemode !== scope.livemode || found.account !== scope.account || isDeleted(found.body)) {
        const hint = found && found.type === 'terminal.location' && found.livemode !== scope.livemode ? ` (it exists in ${found.livemode ? 'live' : 'test'} mode, but a ${scope.livemode ? 'live' : 'test'} mode key was used)` : '';
        throw new SimError(400, 'invalid_request_error', `No such location: '${input.location}'${hint}. A location is required to register a reader: pass a terminal location of the same mode.`, {
          code: 'resource_missing',
          param: 'location',
        });
      }
      location = found.id;
    }
    const serial = simulated ? randomUUID() : code.toUpperCase();
    if (!simulated) {
      const taken = this.kernel.store.list<Stripe.Terminal.Reader, ReaderInternal>('terminal.reader', scope, { serial_number: serial, deleted: null }, { limit: 1 });
      if (taken.data.length > 0) throw invalidRequest('This reader is already registered.', 'registration_code', 'terminal_reader_already_registered');
    }
    const reader: Stripe.Terminal.Reader = {
      id: newId('tmr'),
      object: 'terminal.reader',
      action: null,
      device_sw_version: simulated ? '2.37.2.0' : '2.37.2.0',
      device_type: simulated ?? 'bbpos_wisepos_e',
      ip_address: simulated ? '0.0.0.0' : '192.168.2.2',
      label: input.label ?? (simulated ? 'Simulated reader' : serial),
      last_seen_at: this.kernel.now(),
      livemode: scope.livemode,
      location,
      metadata: mergeMetadata({}, input.metadata),
      serial_number: serial,
      status: 'online',
    };
    return this.kernel.store.insert<Stripe.Terminal.Reader, ReaderInternal>('terminal.reader', scope, reader, { online: true, script: [], timerId: null }).body;
  }

  retrieveReader(scope: Scope, id: string): Stripe.Terminal.Reader | Stripe.Terminal.DeletedReader {
    return findReader(this.kernel, scope, id, true).body;
  }

  updateReader(scope: Scope, id: string, input: { label?: string | undefined; metadata?: Metadata | '' | undefined }): Stripe.Terminal.Reader {
    const row = findReader(this.kernel, scope, id);
    if (input.label !== undefined) row.body.label = input.label;
    row.body.metadata = mergeMetadata(row.body.metadata, input.metadata);
    this.kernel.store.save(row);
    return row.body;
  }

  deleteReader(scope: Scope, id: string): Stripe.Terminal.DeletedReader {
    const row = findReader(this.kernel, scope, id);
    if (row.internal.timerId) throw busy();
    const stub = { id: row.id, object: 'terminal.reader', deleted: true, device_type: row.body.device_type, serial_number: row.body.serial_number } as Stripe.Terminal.DeletedReader;
    (row as StoredObject<unknown, unknown>).body = stub;
    this.kernel.store.save(row);
    return stub;
  }

  listReaders(
    scope: Scope,
    filters: { location?: string | undefined; status?: string | undefined; device_type?: string | undefined; serial_number?: string | undefined },
    page: { limit: number; startingAfter?: string | undefined; endingBefore?: string | undefined },
  ): ListEnvelope<Stripe.Terminal.Reader> {
    const result = this.kernel.store.list<Stripe.Terminal.Reader, ReaderInternal>('terminal.reader', scope, { ...filters, deleted: null }, page);
    return list('/v1/terminal/readers', result.data.map((row) => row.body), result.hasMore);
  }

  /**
   * Shows a cart on the reader. A simulated reader shows it at once, so the action succeeds at once
   * (`terminal.reader.action_succeeded`); the cart stays on screen through the payment that follows.
   */
  setReaderDisplay(origin: Origin, readerId: string, input: { type: 'cart'; cart?: CartInput | undefined }): Stripe.Terminal.Reader {
    const reader = findReader(this.kernel, origin.scope, readerId);
    if (!reader.internal.online) throw offline();
    if (reader.body.action?.status === 'in_progress') throw busy();
    if (!input.cart) throw missingParam('cart');
    const { cart } = input;
    if (!/^[a-z]{3}$/.test(cart.currency)) throw invalidRequest(`Invalid currency: ${cart.currency}.`, 'cart[currency]');
    if (cart.line_items.length === 0) throw missingParam('cart[line_items]');
    cart.line_items.forEach((item, i) => {
      if (!item.description) throw missingParam(`cart[line_items][${i}][description]`);
      if (item.description.length > MAX_LINE_DESCRIPTION) throw invalidRequest(`Description must be at most ${MAX_LINE_DESCRIPTION} characters.`, `cart[line_items][${i}][description]`);
      if (!Number.isInteger(item.quantity) || item.quantity < 1) throw invalidRequest('Quantity must be a positive integer.', `cart[line_items][${i}][quantity]`);
      if (!Number.isInteger(item.amount) || item.amount < 0) throw invalidRequest('Amount must be a non-negative integer.', `cart[line_items][${i}][amount]`);
    });
    if (cart.tax !== undefined && (!Number.isInteger(cart.tax) || cart.tax < 0)) throw invalidRequest('Tax must be a non-negative integer.', 'cart[tax]');
    if (!Number.isInteger(cart.total) || cart.total < 0) throw invalidRequest('Total must be a non-negative integer.', 'cart[total]');
    const shown: CartDisplay = {
      currency: cart.currency,
      line_items: cart.line_items.map((item) => ({ amount: item.amount, description: item.description, quantity: item.quantity })),
      tax: cart.tax ?? null,
      total: cart.total,
    };
    reader.body.action = {
      failure_code: null,
      failure_message: null,
      set_reader_display: { cart: shown, type: 'cart' },
      status: 'succeeded',
      type: 'set_reader_display',
    } as Stripe.Terminal.Reader.Action;
    reader.internal.display = { ...IDLE_DISPLAY, screen: 'cart', cart: shown };
    reader.body.last_seen_at = this.kernel.now();
    this.kernel.store.save(reader);
    this.kernel.events.emit({ ...origin, scope: { livemode: reader.livemode, account: reader.account } }, 'terminal.reader.action_succeeded', reader.body);
    return reader.body;
  }

  /**
   * `refund_payment`: an in-person refund (Interac's rule, allowed for any card-present payment);
   * `refund` makes the refund once the simulated reader has the card, which it has at once.
   */
  refundPayment(origin: Origin, readerId: string, input: { payment_intent?: string | undefined; charge?: string | undefined; amount?: number | undefined; metadata?: Record<string, string> | undefined }, refund: () => Stripe.Refund): Stripe.Terminal.Reader {
    const reader = findReader(this.kernel, origin.scope, readerId);
    if (!reader.internal.online) throw offline();
    if (reader.body.action?.status === 'in_progress') throw busy();
    if (input.payment_intent === undefined && input.charge === undefined) throw missingParam('payment_intent');
    const made = refund();
    reader.body.action = {
      failure_code: null,
      failure_message: null,
      refund_payment: {
        amount: made.amount,
        charge: typeof made.charge === 'string' ? made.charge : (made.charge?.id ?? undefined),
        metadata: input.metadata ?? {},
        payment_intent: typeof made.payment_intent === 'string' ? made.payment_intent : (made.payment_intent?.id ?? undefined),
        refund: made.id,
      },
      status: 'succeeded',
      type: 'refund_payment',
    } as Stripe.Terminal.Reader.Action;
    reader.body.last_seen_at = this.kernel.now();
    this.kernel.store.save(reader);
    this.kernel.events.emit({ ...origin, scope: { livemode: reader.livemode, account: reader.account } }, 'terminal.reader.action_succeeded', reader.body);
    return reader.body;
  }

  /** What the reader's screen shows now. */
  display(readerId: string): ReaderDisplay & { reader: string; lines: string[] } {
    const reader = anyReader(this.kernel, readerId);
    const d = reader.internal.display ?? IDLE_DISPLAY;
    return { reader: reader.id, ...d, lines: displayLines(d) };
  }

  /**
   * The customer answers the tip selection screen: one of the suggestions (1–3), a custom amount,
   * or no tip. The reader then asks for the card, for the total with the tip.
   */
  chooseTip(readerId: string, choice: { option?: number | undefined; amount?: number | undefined; none?: boolean | undefined }): ReaderDisplay & { reader: string; lines: string[] } {
    const reader = anyReader(this.kernel, readerId);
    const d = reader.internal.display;
    if (!d || d.screen !== 'tip_selection' || d.amount === null) {
      throw invalidRequest('The reader is not showing the tip selection screen.', undefined, 'terminal_reader_invalid_state');
    }
    const given = [choice.option !== undefined, choice.amount !== undefined, choice.none === true].filter(Boolean).length;
    if (given !== 1) throw invalidRequest('Choose exactly one of option, amount or none.', 'option');
    let tip = 0;
    if (choice.option !== undefined) {
      const picked = d.tipping?.options.find((o) => o.option === choice.option);
      if (!picked) throw invalidRequest(`The screen shows tip options 1 to ${d.tipping?.options.length ?? 0}.`, 'option');
      tip = picked.amount;
    } else if (choice.amount !== undefined) {
      if (!Number.isInteger(choice.amount) || choice.amount < 0 || choice.amount > MAX_CUSTOM_TIP) throw invalidRequest(`A custom tip is a whole number of minor units from 0 to ${MAX_CUSTOM_TIP}.`, 'amount');
      tip = choice.amount;
    }
    reader.internal.display = { ...d, screen: 'collect_payment', tip, total: d.amount + tip };
    this.kernel.store.save(reader);
    return this.display(readerId);
  }

  setOnline(readerId: string, online: boolean): Stripe.Terminal.Reader {
    const reader = anyReader(this.kernel, readerId);
    reader.internal.online = online;
    reader.body.status = online ? 'online' : 'offline';
    if (online) reader.body.last_seen_at = this.kernel.now();
    this.kernel.store.save(reader);
    return reader.body;
  }

  script(readerId: string, outcomes: ScriptedOutcome[]): Stripe.Terminal.Reader {
    const reader = anyReader(this.kernel, readerId);
    reader.internal.script = [...outcomes];
    this.kernel.store.save(reader);
    return reader.body;
  }
}

import { formatAmount } from './money.js';
import { machineTimeZone, wallClock, zoneAbbreviation } from './time-zone.js';

/**
 * What a card receipt says, computed once from plain data so the receipt page, the API's JSON and
 * the agent's ESC/POS printer all print the same thing. Nothing here touches Express, the database
 * or the network: data in, structured receipt out.
 *
 * The fields are the ones card schemes require on an EMV receipt (merchant name and address, date
 * and time, amount, card brand and masked number, entry mode, application name and AID,
 * authorisation code and response code, verification, reference) as Stripe lists them for custom
 * Terminal receipts (docs.stripe.com/terminal/features/receipts).
 */

export interface ReceiptAddress {
  line1: string;
  line2?: string | null | undefined;
  city: string;
  state?: string | null | undefined;
  postal_code: string;
  country: string;
}

/** The card as the processor's `payment_method_details.card_present` (or `card`) describes it. */
export interface ReceiptCard {
  brand: string | null;
  last4: string | null;
  /** Stripe's `read_method`: `contactless_emv`, `contact_emv`, `magnetic_stripe_track2`, … */
  readMethod: string | null;
  /** `receipt.application_preferred_name` (EMV tag 9F12). */
  applicationName: string | null;
  /** `receipt.dedicated_file_name`: the AID (EMV tag 84). */
  aid: string | null;
  authorizationCode: string | null;
  /** `receipt.authorization_response_code`: the issuer's answer (EMV tag 8A). */
  responseCode: string | null;
  /** `receipt.account_type`: `credit`, `checking`, `prepaid`, `unknown`. */
  accountType: string | null;
  /** `receipt.cardholder_verification_method`: `approval`, `offline_pin`, `online_pin`, `signature`, … */
  verification: string | null;
}

export interface ReceiptInput {
  merchantName: string;
  /** Where the sale happened: the terminal location's address (what a shop's receipt prints). */
  address: ReceiptAddress | null;
  reference: string;
  mode: 'test' | 'live';
  /** The processor is the simulator: even a live payment moved no money. */
  simulated: boolean;
  currency: string;
  /** The final amount, tip included (minor units). */
  amount: number;
  tip: number;
  refunded: number;
  /** When the payment was approved (epoch ms), if it has been. */
  paidAt: number | null;
  /** The IANA zone its time is printed in: the location's; left out, the machine's. */
  timeZone?: string | null | undefined;
  description: string | null;
  /** The sale this payment is a part of (a sale paid in parts: cash and a card, two cards), else none. */
  order?: string | null | undefined;
  card: ReceiptCard | null;
}

/** One printed line: `label` left, `value` right; `key` is stable for programs (printer, tests). */
export interface ReceiptLine {
  key: ReceiptLineKey;
  label: string;
  value: string;
}

export type ReceiptLineKey =
  | 'date'
  | 'time'
  | 'reference'
  | 'order'
  | 'description'
  | 'subtotal'
  | 'tip'
  | 'total'
  | 'refunded'
  | 'card'
  | 'entry_mode'
  | 'account_type'
  | 'application'
  | 'aid'
  | 'authorization_code'
  | 'response_code'
  | 'verification';

export interface ReceiptContent {
  object: 'receipt';
  merchant_name: string;
  /** The address as printed, one entry a line (empty when there is none). */
  address_lines: string[];
  /** A mark no one can miss when no money moved (test mode or simulator), else null. */
  notice: string | null;
  /** `APPROVED`, or `REFUNDED` / `PARTIALLY REFUNDED` after refunds. */
  status: string;
  /** Date, time, reference (and the order of a sale paid in parts). */
  header: ReceiptLine[];
  /** Subtotal, tip, total (and refunded). */
  amounts: ReceiptLine[];
  /** Card, entry mode, application, AID, authorisation code, verification. */
  card: ReceiptLine[];
  /** Closing lines (verification, what to keep). */
  footer: string[];
}

const READ_METHODS: Record<string, string> = {
  contactless_emv: 'Contactless',
  contactless_magstripe_mode: 'Contactless (magstripe)',
  contact_emv: 'Chip',
  magnetic_stripe_track2: 'Swipe',
  magnetic_stripe_fallback: 'Swipe (chip fallback)',
};

const VERIFICATIONS: Record<string, string> = {
  approval: 'No verification required',
  none: 'No verification required',
  offline_pin: 'PIN verified',
  online_pin: 'PIN verified',
  offline_pin_and_signature: 'PIN and signature',
  signature: 'Signature',
  failure: 'Verification failed',
};

const BRANDS: Record<string, string> = {
  visa: 'Visa',
  mastercard: 'Mastercard',
  amex: 'American Express',
  discover: 'Discover',
  diners: 'Diners Club',
  jcb: 'JCB',
  unionpay: 'UnionPay',
  interac: 'Interac',
  eftpos_au: 'eftpos',
};

/** "visa" → "Visa"; an unknown brand is shown as given. */
export function brandName(brand: string | null): string {
  if (!brand) return 'Card';
  return Object.hasOwn(BRANDS, brand) ? BRANDS[brand]! : brand;
}

/** "contactless_emv" → "Contactless"; an unknown read method is shown as given. */
export function entryModeName(readMethod: string): string {
  return Object.hasOwn(READ_METHODS, readMethod) ? READ_METHODS[readMethod]! : readMethod;
}

export function addressLines(address: ReceiptAddress | null): string[] {
  if (!address) return [];
  const cityLine = [address.city, [address.state, address.postal_code].filter(Boolean).join(' ')].filter(Boolean).join(', ');
  return [address.line1, address.line2 ?? '', cityLine, address.country].filter((line) => line.trim() !== '');
}

function pad(n: number): string {
  return String(n).padStart(2, '0');
}

/** The receipt of a payment, from plain data. Times are the location's local time, and name its zone. */
export function receiptContent(input: ReceiptInput): ReceiptContent {
  const money = (n: number) => formatAmount(n, input.currency);
  const header: ReceiptLine[] = [];
  if (input.paidAt !== null) {
    const zone = input.timeZone ?? machineTimeZone();
    const at = wallClock(input.paidAt, zone);
    header.push({ key: 'date', label: 'Date', value: `${at.year}-${pad(at.month)}-${pad(at.day)}` });
    header.push({ key: 'time', label: 'Time', value: `${pad(at.hour)}:${pad(at.minute)}:${pad(at.second)} ${zoneAbbreviation(input.paidAt, zone)}` });
  }
  header.push({ key: 'reference', label: 'Reference', value: input.reference });
  // A part of a sale paid in parts names its sale, so the customer's slips read as one sale.
  if (input.order) header.push({ key: 'order', label: 'Order', value: input.order });
  if (input.description) header.push({ key: 'description', label: 'Description', value: input.description });

  const amounts: ReceiptLine[] = [
    { key: 'subtotal', label: 'Amount', value: money(input.amount - input.tip) },
    { key: 'tip', label: 'Tip', value: money(input.tip) },
    { key: 'total', label: 'Total', value: money(input.amount) },
  ];
  if (input.refunded > 0) amounts.push({ key: 'refunded', label: 'Refunded', value: money(input.refunded) });

  const card: ReceiptLine[] = [];
  const c = input.card;
  if (c) {
    card.push({ key: 'card', label: 'Card', value: `${brandName(c.brand)} •••• ${c.last4 ?? '????'}` });
    if (c.readMethod) card.push({ key: 'entry_mode', label: 'Entry', value: entryModeName(c.readMethod) });
    if (c.accountType && c.accountType !== 'unknown') card.push({ key: 'account_type', label: 'Account', value: c.accountType[0]!.toUpperCase() + c.accountType.slice(1) });
    if (c.applicationName) card.push({ key: 'application', label: 'Application', value: c.applicationName });
    if (c.aid) card.push({ key: 'aid', label: 'AID', value: c.aid });
    if (c.authorizationCode) card.push({ key: 'authorization_code', label: 'Auth code', value: c.authorizationCode });
    if (c.responseCode) card.push({ key: 'response_code', label: 'ARC', value: c.responseCode });
    if (c.verification) {
      card.push({ key: 'verification', label: 'Verification', value: Object.hasOwn(VERIFICATIONS, c.verification) ? VERIFICATIONS[c.verification]! : c.verification });
    }
  }

  const notice = input.mode === 'test' ? 'TEST MODE: no money moved' : input.simulated ? 'SIMULATED: no money moved' : null;
  const status = input.refunded <= 0 ? 'APPROVED' : input.refunded >= input.amount ? 'REFUNDED' : 'PARTIALLY REFUNDED';
  const footer = [c?.verification === 'signature' || c?.verification === 'offline_pin_and_signature' ? 'Cardholder signature: ____________________' : '', 'Keep this receipt for your records.'].filter(
    (line) => line !== '',
  );
  return { object: 'receipt', merchant_name: input.merchantName, address_lines: addressLines(input.address), notice, status, header, amounts, card, footer };
}

/** Words broken onto lines of at most `width` characters (a longer word is cut). */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let current = '';
  for (const word of text.split(' ')) {
    for (let rest = word; rest.length > 0; rest = rest.slice(width)) {
      const piece = rest.slice(0, width);
      if (current === '') current = piece;
      else if (current.length + 1 + piece.length <= width) current += ` ${piece}`;
      else {
        lines.push(current);
        current = piece;
      }
    }
  }
  return [...lines, current];
}

/** Every line in printing order: what a plain-text or ESC/POS printer walks. */
export function receiptTextLines(content: ReceiptContent, width = 42): string[] {
  const row = (line: ReceiptLine) => {
    const room = width - line.label.length - 1;
    return line.value.length <= room ? `${line.label} ${line.value.padStart(room)}` : `${line.label}\n${line.value.padStart(width)}`;
  };
  const centre = (text: string) => wrap(text, width).map((part) => part.padStart(Math.floor((width + part.length) / 2)).trimEnd()).join('\n');
  const rule = '-'.repeat(width);
  return [
    centre(content.merchant_name),
    ...content.address_lines.map(centre),
    ...(content.notice ? ['', centre(`*** ${content.notice} ***`)] : []),
    rule,
    ...content.header.map(row),
    rule,
    ...content.amounts.map(row),
    rule,
    ...content.card.map(row),
    '',
    centre(content.status),
    ...content.footer.map(centre),
  ].flatMap((line) => line.split('\n'));
}

import ReceiptPrinterEncoder from '@point-of-sale/receipt-printer-encoder';
import { formatAmount } from '../../shared/money.js';
import { receiptContent, receiptTextLines, type ReceiptContent } from '../../shared/receipt.js';
import type { Transaction } from '../../shared/api/types.js';

/**
 * ESC/POS (Epson's command set, which nearly every receipt printer and its cash drawer port speak):
 * receipts encoded by @point-of-sale/receipt-printer-encoder, and the real-time status the printer
 * answers to `DLE EOT n`. Nothing here does I/O.
 */

/** 58 mm paper takes 32 columns of font A; 80 mm takes 42 (font B 48 on some models). */
export const PRINTER_COLUMNS = [32, 42, 48] as const;
export type PrinterColumns = (typeof PRINTER_COLUMNS)[number];

export interface PrinterProfile {
  columns: PrinterColumns;
  /** A code page the encoder knows (cp437, cp858, cp1252, …); cp858 is cp850 with the euro sign. */
  codepage: string;
}

export const DEFAULT_PRINTER_PROFILE: PrinterProfile = { columns: 42, codepage: 'cp858' };

export type ReceiptCopy = 'customer' | 'merchant';

/** What the printer prints: the shared receipt content, the cash lines of a cash sale, the receipt's URL. */
export interface PrintableReceipt {
  content: ReceiptContent;
  /** Cash tendered and change, for a cash sale. */
  tender: { label: string; value: string }[];
  /** Printed as a QR code, so the customer can open the receipt page. */
  url: string | null;
  copy: ReceiptCopy;
}

/**
 * The receipt of a transaction: `content` as the server gives it (GET /v1/transactions/{id}/receipt,
 * with the card's EMV fields and the location's address), or, when the server has none, drawn here
 * from the transaction by the same shared function.
 */
export function printableReceipt(txn: Transaction, merchantName: string, copy: ReceiptCopy, served?: ReceiptContent): PrintableReceipt {
  const content = served ?? receiptContent({
    merchantName,
    address: null,
    reference: txn.reference,
    mode: txn.is_test ? 'test' : 'live',
    simulated: false,
    currency: txn.currency,
    amount: txn.amount,
    tip: txn.tip_amount,
    refunded: txn.amount_refunded,
    paidAt: txn.captured_at ? Date.parse(txn.captured_at) : null,
    description: txn.description,
    order: txn.metadata?.order ?? null,
    card: txn.card_brand || txn.card_last_four
      ? { brand: txn.card_brand, last4: txn.card_last_four, readMethod: null, applicationName: null, aid: null, authorizationCode: null, responseCode: null, accountType: null, verification: null }
      : null,
  });
  const tender = txn.payment_method_type === 'cash' && txn.amount_tendered !== null && txn.change_due !== null
    ? [
        { label: 'Cash', value: formatAmount(txn.amount_tendered, txn.currency) },
        { label: 'Change', value: formatAmount(txn.change_due, txn.currency) },
      ]
    : [];
  // A part of a sale paid in parts names its order (receiptContent's `order` line), so the
  // customer's slips read as one sale; a receipt served by an older server lacks the line.
  const order = txn.metadata?.order;
  const named = content.header.some((line) => line.key === 'order');
  return { content, tender: order && !named ? [...tender, { label: 'Order', value: order }] : tender, url: txn.receipt_url, copy };
}

/**
 * Characters the printer's code pages lack or, worse, map to control bytes (the bullet is BEL in
 * cp437): printed as their plain look-alikes instead.
 */
function printable(text: string): string {
  return text.replace(/•/g, '*').replace(/[—–]/g, '-');
}

function encoder(profile: PrinterProfile): ReceiptPrinterEncoder {
  // feedBeforeCut: the cutter sits a few lines above the print head, so the last line clears it.
  return new ReceiptPrinterEncoder({ language: 'esc-pos', columns: profile.columns, codepageMapping: 'epson', feedBeforeCut: 4 });
}

/** The receipt as printer bytes: text lines, the QR code of its URL, a cut. */
export function encodeReceipt(receipt: PrintableReceipt, profile: PrinterProfile): Uint8Array {
  const width = profile.columns;
  const e = encoder(profile).initialize().codepage(profile.codepage as Parameters<ReceiptPrinterEncoder['codepage']>[0]);
  const lines = receiptTextLines(receipt.content, width);
  e.bold(true).line(printable(lines[0] ?? '')).bold(false);
  for (const line of lines.slice(1)) e.line(printable(line));
  if (receipt.tender.length) {
    e.line('-'.repeat(width));
    for (const t of receipt.tender) e.line(printable(`${t.label} ${t.value.padStart(width - t.label.length - 1)}`));
  }
  if (receipt.url) e.newline().align('center').qrcode(receipt.url, { model: 2, size: 6, errorlevel: 'm' }).align('left');
  if (receipt.copy === 'merchant') e.newline().align('center').bold(true).line('MERCHANT COPY').bold(false).align('left');
  return e.cut('partial').encode();
}

/**
 * The drawer kick: `ESC p 0 t1 t2`, a pulse on connector pin 2 (where nearly every drawer is wired)
 * of 100 ms on and 500 ms off, what drawer makers ask for to release the latch without overheating
 * the solenoid.
 */
export function drawerKick(profile: PrinterProfile): Uint8Array {
  return encoder(profile).pulse(0, 100, 500).encode();
}

/** `DLE EOT n`: printer status (1), offline cause (2), roll paper sensor (4). */
export const STATUS_REQUESTS = [Uint8Array.of(0x10, 0x04, 1), Uint8Array.of(0x10, 0x04, 2), Uint8Array.of(0x10, 0x04, 4)] as const;

/** A real-time status byte: bits 1 and 4 are always set, bits 0 and 7 always clear. */
export function isStatusByte(b: number): boolean {
  return (b & 0x93) === 0x12;
}

export interface PrinterStatus {
  online: boolean;
  coverOpen: boolean;
  paper: 'ok' | 'near_end' | 'out';
  /** What the drawer sensor (connector pin 3) says; drawers differ in which level is open. */
  drawerOpen: boolean;
  /** The printer stopped on an error (cutter jam, head too hot). */
  error: boolean;
}

/** The three status bytes, in the order of STATUS_REQUESTS. */
export function decodeStatus(printer: number, offline: number, paper: number): PrinterStatus {
  return {
    online: (printer & 0x08) === 0,
    // A drawer whose switch closes when it shuts pulls pin 3 low: a high level is an open drawer.
    drawerOpen: (printer & 0x04) !== 0,
    coverOpen: (offline & 0x04) !== 0,
    error: (offline & 0x40) !== 0,
    paper: (paper & 0x60) !== 0 || (offline & 0x20) !== 0 ? 'out' : (paper & 0x0c) !== 0 ? 'near_end' : 'ok',
  };
}

/** Whether a receipt can go out now. */
export function canPrint(status: PrinterStatus): boolean {
  return status.online && !status.coverOpen && !status.error && status.paper !== 'out';
}

/** The status in words for the counter; null when all is well. */
export function statusProblem(status: PrinterStatus): string | null {
  if (status.paper === 'out') return 'Printer out of paper';
  if (status.coverOpen) return 'Printer cover open';
  if (status.error) return 'Printer error (cutter or head): check the printer';
  if (!status.online) return 'Printer offline';
  return null;
}


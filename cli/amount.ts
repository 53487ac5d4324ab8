import { currencyDecimals, formatAmount, isCurrency, minimumCharge } from '../shared/money.js';
import { usageError } from './errors.js';

/**
 * Amounts as people type them at a counter, turned into integer minor units:
 *
 *   47.50, 47.5, 47   → 4750, 4750, 4700     (a two-decimal currency)
 *   4750c             → 4750                  (minor units, any currency)
 *   0.5               → 50
 *   4750 in jpy       → 4750                  (no decimals; 47.5 is refused)
 *
 *   7,50 or 7,5       → 750                   (a comma is the decimal point when that is the only reading)
 *
 * Refused, each with a message saying what to type instead: a comma that could be a thousands
 * separator (1,000 is a thousand in one country and one in another, so it is never guessed), a
 * comma and a dot together, more decimals than the currency has (47.505), signs, exponents,
 * currency symbols, spaces inside, a bare ".5" or "47.", zero, and more than the API's maximum.
 */

/** The API's largest amount (shared/contract/transactions.ts MAX_AMOUNT): refusing it here gives a clearer message. */
export const MAX_AMOUNT = 99_999_999;

export function parseAmount(input: string, currency: string): number {
  const raw = input.trim();
  const code = currency.toLowerCase();
  if (!isCurrency(code)) throw usageError(`unknown currency "${currency}"`);
  const decimals = currencyDecimals(code);
  const example = decimals === 0 ? '4750' : '47.50';
  if (raw === '') throw usageError(`amount is empty: write e.g. ${example} or 4750c`);
  const decimalComma = decimals > 0 ? new RegExp(`^(\\d+),(\\d{1,${decimals}})$`).exec(raw) : null;
  if (decimalComma) return parseAmount(`${decimalComma[1]}.${decimalComma[2]}`, code);
  if (raw.includes(',')) {
    throw usageError(
      decimals === 0
        ? `amount "${raw}" has a comma: write it without thousands separators, e.g. 1000`
        : `amount "${raw}" has a comma that could separate thousands: write it without, with a dot or comma for the cents, e.g. 1000 or 7.50`,
    );
  }
  if (/^[-+]/.test(raw)) throw usageError(`amount "${raw}" must be positive and written without a sign`);

  let minor: number;
  const cents = /^(\d+)c$/i.exec(raw);
  if (cents) {
    minor = Number(cents[1]);
  } else {
    const m = /^(\d+)(?:\.(\d+))?$/.exec(raw);
    if (!m) throw usageError(`amount "${raw}" is not a number: write e.g. ${example} (or ${decimals === 0 ? '4750c' : '4750c for 47.50'})`);
    const whole = m[1] ?? '0';
    const fraction = m[2] ?? '';
    if (fraction.length > decimals) {
      throw usageError(
        decimals === 0
          ? `${code.toUpperCase()} has no decimals: "${raw}" is ambiguous, write a whole number`
          : `amount "${raw}" has more than ${decimals} decimals for ${code.toUpperCase()}`,
      );
    }
    minor = Number(whole) * 10 ** decimals + Number(fraction.padEnd(decimals, '0') || '0');
  }
  if (!Number.isSafeInteger(minor) || minor > MAX_AMOUNT) throw usageError(`amount "${raw}" is over the maximum of ${formatAmount(MAX_AMOUNT, code)}`);
  if (minor === 0) throw usageError('amount must be more than zero');
  return minor;
}

/**
 * Cash in the drawer (the opening float, the count at the close), for `pos report day` and the
 * counter's close-out: read like a payment's amount (7,50 is 7.50), but an empty drawer (0) is a
 * real count.
 */
export function parseDrawerAmount(input: string, currency: string): number {
  return /^0+([.,]0+)?c?$/i.test(input.trim()) ? 0 : parseAmount(input, currency);
}

/** The amount as the CLI would take it back: 4750 usd → "47.50", 4750 jpy → "4750". */
export function formatPlain(minor: number, currency: string): string {
  const decimals = currencyDecimals(currency.toLowerCase());
  if (decimals === 0) return String(minor);
  const s = String(minor).padStart(decimals + 1, '0');
  return `${s.slice(0, -decimals)}.${s.slice(-decimals)}`;
}

/**
 * Why a card payment of this amount would be refused before it reaches the processor, in money
 * ("Minimum charge is $0.50"), or null when it may be sent. Checked before sending, so the counter
 * answers at once instead of after a round trip.
 */
export function chargeLimitError(minor: number, currency: string): string | null {
  const min = minimumCharge(currency.toLowerCase());
  if (minor < min) return `Minimum charge is ${formatAmount(min, currency)}`;
  if (minor > MAX_AMOUNT) return `Maximum charge is ${formatAmount(MAX_AMOUNT, currency)}`;
  return null;
}

/** parseAmount plus the charge limits: what the counter and `pos pay` accept for a card payment. */
export function parseChargeAmount(input: string, currency: string): number {
  const minor = parseAmount(input, currency);
  const limit = chargeLimitError(minor, currency);
  if (limit) throw usageError(`${limit}: "${input.trim()}" is ${formatAmount(minor, currency)}`);
  return minor;
}

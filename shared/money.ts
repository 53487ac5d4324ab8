/**
 * Money is integer minor units plus a lowercase ISO 4217 code, end to end. These are the currencies
 * the platform accepts: Stripe's most used settlement currencies. Zero-decimal ones are marked so
 * amounts are formatted (and parsed by the CLI) correctly: ¥500 is `amount` 500. ISK and UGX are
 * left out on purpose: Stripe calls them zero-decimal yet wants their amounts in a two-decimal form
 * (docs/api-choices.md), which would break "minor units end to end".
 */
export const CURRENCIES = {
  usd: 2, eur: 2, gbp: 2, cad: 2, aud: 2, nzd: 2, chf: 2, sek: 2, nok: 2, dkk: 2, pln: 2, czk: 2,
  huf: 2, ron: 2, bgn: 2, mxn: 2, brl: 2, sgd: 2, hkd: 2, inr: 2, myr: 2, thb: 2, zar: 2, aed: 2,
  ils: 2, try: 2, php: 2, idr: 2, jpy: 0, krw: 0, vnd: 0, clp: 0,
} as const satisfies Record<string, number>;

/**
 * Stripe's minimum charge per currency, in minor units (Stripe's "Minimum and maximum charge
 * amounts"). The spec's floor of 50 minor units applies everywhere; where Stripe asks for more
 * (HK$4.00, 300 kr, …) Stripe's figure is the minimum. Currencies not listed have the spec's 50.
 */
export const STRIPE_MINIMUM_CHARGE: Partial<Record<Currency, number>> = {
  usd: 50, eur: 50, gbp: 30, cad: 50, aud: 50, nzd: 50, chf: 50, sgd: 50, jpy: 50, inr: 50,
  dkk: 250, nok: 300, sek: 300, hkd: 400, mxn: 1000, pln: 200, czk: 1500, huf: 17500, ron: 200,
  bgn: 100, brl: 50, myr: 200, thb: 1000, aed: 200,
};

/** Spec §8: the smallest payment anywhere is 50 minor units. */
export const SPEC_MINIMUM_CHARGE = 50;

/** The smallest amount a payment in this currency may have, in minor units. */
export function minimumCharge(currency: string): number {
  const stripe = isCurrency(currency) ? STRIPE_MINIMUM_CHARGE[currency] : undefined;
  return Math.max(SPEC_MINIMUM_CHARGE, stripe ?? SPEC_MINIMUM_CHARGE);
}

/**
 * The countries a merchant can be in, with the currency it settles in by default: where the
 * platform's Connect accounts are tested (docs/api-choices.md). ACH debits are for US merchants only.
 */
export const COUNTRIES = {
  US: 'usd', CA: 'cad', GB: 'gbp', IE: 'eur', DE: 'eur', FR: 'eur', NL: 'eur', AU: 'aud', JP: 'jpy',
} as const satisfies Record<string, Currency>;

export type Country = keyof typeof COUNTRIES;

export function isCountry(code: string): code is Country {
  return Object.hasOwn(COUNTRIES, code);
}

export type Currency = keyof typeof CURRENCIES;

export function isCurrency(code: string): code is Currency {
  return Object.hasOwn(CURRENCIES, code);
}

export function currencyDecimals(code: string): number {
  return isCurrency(code) ? CURRENCIES[code] : 2;
}

/** 4750 usd → "$47.50"; for people, never for computation. */
export function formatAmount(amount: number, currency: string, locale = 'en-US'): string {
  const decimals = currencyDecimals(currency);
  return new Intl.NumberFormat(locale, { style: 'currency', currency: currency.toUpperCase(), minimumFractionDigits: decimals, maximumFractionDigits: decimals }).format(
    amount / 10 ** decimals,
  );
}

import { describe, expect, it } from 'vitest';
import { CliError } from './errors.js';
import { ExitCode } from './exit-codes.js';
import { chargeLimitError, formatPlain, parseAmount, parseChargeAmount } from './amount.js';

describe('parseAmount', () => {
  it.each([
    ['47.50', 'usd', 4750],
    ['47.5', 'usd', 4750],
    ['47', 'usd', 4700],
    ['4750c', 'usd', 4750],
    ['4750C', 'usd', 4750],
    ['0.5', 'usd', 50],
    ['0.05', 'usd', 5],
    [' 12.00 ', 'eur', 1200],
    ['4750', 'jpy', 4750],
    ['4750c', 'jpy', 4750],
    ['4750', 'JPY', 4750],
    ['999999.99', 'usd', 99_999_999],
    ['7,50', 'usd', 750],
    ['7,5', 'eur', 750],
    ['47,50', 'eur', 4750],
  ])('%s %s → %i', (input, currency, expected) => {
    expect(parseAmount(input, currency)).toBe(expected);
  });

  it.each([
    ['1,000.00', 'usd', /comma/],
    ['1,000', 'usd', /comma that could separate thousands/],
    ['1,50', 'jpy', /comma/],
    ['7,505', 'eur', /comma/],
    ['7,', 'usd', /comma/],
    ['47.505', 'usd', /more than 2 decimals/],
    ['47.5', 'jpy', /no decimals/],
    ['-5', 'usd', /positive/],
    ['+5', 'usd', /positive/],
    ['0', 'usd', /more than zero/],
    ['0.00', 'usd', /more than zero/],
    ['0c', 'usd', /more than zero/],
    ['.5', 'usd', /not a number/],
    ['47.', 'usd', /not a number/],
    ['1e3', 'usd', /not a number/],
    ['$47.50', 'usd', /not a number/],
    ['47.50c', 'usd', /not a number/],
    ['4 750', 'usd', /not a number/],
    ['', 'usd', /empty/],
    ['1000000.00', 'usd', /maximum of \$999,999\.99/],
    ['10', 'xyz', /unknown currency/],
  ])('refuses %s %s', (input, currency, message) => {
    let caught: unknown;
    try {
      parseAmount(input, currency);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(CliError);
    expect((caught as CliError).exitCode).toBe(ExitCode.usage);
    expect((caught as CliError).message).toMatch(message);
  });

  it('formats back the way it parses', () => {
    expect(formatPlain(4750, 'usd')).toBe('47.50');
    expect(formatPlain(5, 'usd')).toBe('0.05');
    expect(formatPlain(4750, 'jpy')).toBe('4750');
  });
});

describe('charge limits', () => {
  it.each([
    [49, 'usd', 'Minimum charge is $0.50'],
    [29, 'gbp', 'Minimum charge is £0.50'],
    [399, 'hkd', 'Minimum charge is HK$4.00'],
    [49, 'jpy', 'Minimum charge is ¥50'],
    [100_000_000, 'usd', 'Maximum charge is $999,999.99'],
  ])('%i %s: %s', (minor, currency, words) => {
    expect(chargeLimitError(minor, currency)).toBe(words);
  });

  it('lets the smallest allowed amount through', () => {
    expect(chargeLimitError(50, 'usd')).toBeNull();
    expect(parseChargeAmount('0.50', 'usd')).toBe(50);
  });

  it('refuses 0.49 in money, not minor units', () => {
    expect(() => parseChargeAmount('0.49', 'usd')).toThrow('Minimum charge is $0.50: "0.49" is $0.49');
  });
});

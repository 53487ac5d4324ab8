/**
 * What a terminal payment asks of the reader, as given at create-payment and stored with the
 * payment (`transactions.terminal_options`): the cart shown before the tap and the tip screen and
 * cancel button settings.
 */
export interface TerminalOptions {
  line_items?: { description: string; quantity: number; amount: number }[];
  tax?: number;
  skip_tipping: boolean;
  enable_customer_cancellation: boolean;
}

export function parseTerminalOptions(stored: string | null): TerminalOptions | null {
  return stored ? (JSON.parse(stored) as TerminalOptions) : null;
}

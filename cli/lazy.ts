import type { Command } from 'commander';
import type { CliContext } from './context.js';

export type Action<A extends unknown[], O> = (args: A, options: O, ctx: CliContext) => Promise<void>;

/**
 * Declares an action that is imported only when its command runs, so `pos --help` loads commander
 * and nothing else (not even the API client or lowdb). The action gets `(args, options, ctx)`.
 */
export function lazy<A extends unknown[], O>(load: () => Promise<Action<A, O>>) {
  return async (...received: unknown[]): Promise<void> => {
    const command = received[received.length - 1] as Command;
    const options = received[received.length - 2] as O;
    const args = received.slice(0, -2) as A;
    const [action, ctx] = await Promise.all([load(), import('./context.js').then((m) => m.contextFrom(command))]);
    await action(args, options, ctx);
  };
}

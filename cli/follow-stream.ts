import { ApiRequestError } from '../shared/api/errors.js';
import type { StreamMessage } from '../shared/api/transport.js';
import type { ApiErrorBody } from '../shared/api/types.js';
import type { Output } from './output.js';

/** A pause before reconnecting, so a restarting server is not hammered. */
const RECONNECT_DELAY_MS = 1_000;

/**
 * Follows a Server-Sent Events stream of the API until ^C (SIGINT or SIGTERM), reconnecting when the
 * server goes away. `open` (re)connects; `ready` is told the stream's mode on the first `ready` only
 * (later ones say "Reconnected."); every other message goes to `onMessage`. An `error` event is the
 * server ending the stream for good (its key was revoked or expired): reconnecting would only be
 * refused, so it is thrown. Before the first connection any failure is the answer (a wrong key or
 * URL) and is thrown too; after it, the server is restarting and we wait for it.
 */
export async function followStream(
  out: Output,
  open: (onMessage: (message: StreamMessage) => Promise<void>, signal: AbortSignal) => Promise<void>,
  ready: (mode: string) => void,
  onMessage: (message: StreamMessage) => Promise<void> | void,
): Promise<void> {
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  let announced = false;
  let connected = false;
  let refused: ApiRequestError | undefined;
  const receive = async (message: StreamMessage): Promise<void> => {
    if (message.event === 'error') {
      refused = new ApiRequestError(401, (JSON.parse(message.data) as { error: ApiErrorBody }).error);
      return;
    }
    if (message.event === 'ready') {
      if (announced && !connected) out.error('Reconnected.');
      if (!announced) ready((JSON.parse(message.data) as { mode: string }).mode);
      announced = true;
      connected = true;
      return;
    }
    await onMessage(message);
  };
  try {
    while (!stop.signal.aborted) {
      try {
        await open(receive, stop.signal);
      } catch (err) {
        if (!announced) throw err;
      }
      if (refused) throw refused;
      if (stop.signal.aborted) break;
      if (connected) out.error('Connection to the server lost; reconnecting…');
      connected = false;
      await new Promise((resolve) => setTimeout(resolve, RECONNECT_DELAY_MS));
    }
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

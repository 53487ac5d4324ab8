/**
 * One measured phase against bench/webhook-receiver.ts: the receiver starts counting, `begin` gets
 * the deliveries going (it resolves once they may start: for pos, when the backlog has committed),
 * and the phase ends when the receiver has every distinct delivery. Returns deliveries per second
 * from then until the last one arrived.
 */
export async function phase(receiverUrl: string, deliveries: number, begin: () => Promise<void>): Promise<number> {
  const reset = await fetch(`${receiverUrl}/_phase?deliveries=${deliveries}`, { method: 'POST' });
  if (reset.status !== 204) throw new Error(`receiver answered ${reset.status} to a new phase`);
  const done = fetch(`${receiverUrl}/_done`).then((res) => res.arrayBuffer());
  await begin();
  const started = performance.now();
  await done;
  return deliveries / ((performance.now() - started) / 1000);
}

/** What a sender child prints as its last stdout line. */
export interface SenderResult {
  deliveries: number;
  deliveriesPerSecond: number;
}

import { ApiRequestError } from '../../shared/api/errors.js';
import type { CreateLocationParams } from '../../shared/api/types.js';
import type { DriverContext, ReaderDriver } from './types.js';

/** The location simulated readers attach to when the merchant has no test location yet. */
const SIMULATED_LOCATION: CreateLocationParams = {
  display_name: 'Simulated readers',
  address: { line1: '1 Test Street', city: 'San Francisco', state: 'CA', postal_code: '94105', country: 'US' },
};

/**
 * `--simulate N`: N simulated readers (`simulated-wpe`, test mode), registered once and
 * remembered in the data dir across restarts. Once registered they are processor readers like any
 * other; the processor driver follows them and reports them as `simulated`.
 */
export class SimulatedDriver implements ReaderDriver {
  readonly kind = 'simulated' as const;

  constructor(
    private readonly ctx: DriverContext,
    private readonly count: number,
  ) {}

  ids(): ReadonlySet<string> {
    return new Set(this.ctx.state.data.simulated);
  }

  handles(key: string): boolean {
    return this.ctx.state.data.simulated.includes(key);
  }

  async start(): Promise<void> {
    if (this.count === 0) return;
    const existing = new Set((await this.ctx.api.listReaders()).data.map((r) => r.processor_terminal_id));
    // Readers deleted on the server since are forgotten and replaced.
    this.ctx.state.data.simulated = this.ctx.state.data.simulated.filter((id) => existing.has(id));
    const missing = this.count - this.ctx.state.data.simulated.length;
    if (missing <= 0) return;
    const locations = (await this.ctx.api.listLocations()).data;
    const location = locations[0] ?? (await this.ctx.api.createLocation(SIMULATED_LOCATION)).data;
    for (let i = 0; i < missing; i += 1) {
      const n = this.ctx.state.data.simulated.length + 1;
      try {
        const reader = (await this.ctx.api.registerReader({ name: `Simulated ${n}`, registration_code: 'simulated-wpe', location_id: location.id })).data;
        this.ctx.state.data.simulated.push(reader.processor_terminal_id);
        this.ctx.state.save();
      } catch (err) {
        this.ctx.logger.error({ err: err instanceof ApiRequestError ? err.error : err }, 'could not register a simulated reader');
        throw err;
      }
    }
    await this.ctx.state.flush();
    this.ctx.logger.info({ simulated: this.ctx.state.data.simulated.length, registered: missing }, 'simulated readers registered');
  }

  async stop(): Promise<void> {}

  watch(): void {}

  paymentStarted(): void {}
}

import type { FieldCipher } from '../db/encryption.js';
import type { Store } from '../db/store.js';

/** A webhook endpoint the server registered on the processor, with the secret that signs its events. */
export interface RegisteredEndpoint {
  id: string;
  secret: string;
}

/**
 * Where the processor adapter keeps the endpoints it registered, by name, so that a restart updates
 * them instead of making new ones: events still being retried keep arriving under the same secret.
 */
export interface EndpointSettings {
  load(name: string): Promise<RegisteredEndpoint | undefined>;
  save(name: string, endpoint: RegisteredEndpoint): Promise<void>;
}

/** The endpoints in `processor_settings`, sealed: a secret there signs events the server trusts. */
export class StoredEndpointSettings implements EndpointSettings {
  constructor(
    private readonly store: Store,
    private readonly cipher: FieldCipher,
  ) {}

  async load(name: string): Promise<RegisteredEndpoint | undefined> {
    const saved = await this.store.db.selectFrom('processor_settings').select('value').where('name', '=', name).executeTakeFirst();
    return saved ? (JSON.parse(this.cipher.open('processor_settings.value', name, saved.value)) as RegisteredEndpoint) : undefined;
  }

  async save(name: string, endpoint: RegisteredEndpoint): Promise<void> {
    const value = this.cipher.seal('processor_settings.value', name, JSON.stringify(endpoint));
    await this.store.db
      .insertInto('processor_settings')
      .values({ name, value })
      .onConflict((oc) => oc.column('name').doUpdateSet({ value }))
      .execute();
  }
}

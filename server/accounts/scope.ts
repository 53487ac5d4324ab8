import type { Mode } from '../db/schema.js';

/** Every read and write happens inside one merchant's one mode; the API key decides which. */
export interface Scope {
  merchantId: string;
  mode: Mode;
}

import { readdir } from 'node:fs/promises';
import type { Migration, MigrationProvider } from 'kysely';

/** `0001_merchants_and_keys.ts` (sources under vitest) or `.js` (the build), never a declaration. */
const MIGRATION_FILE = /^(\d{4}_[a-z0-9_]+)\.(?:ts|js)$/;

const folder = new URL('./migrations/', import.meta.url);

/**
 * The numbered migrations, one file each under `migrations/`, each exporting `up`. They use Kysely's
 * schema builder only, so the same source creates the SQLite and the PostgreSQL schema. Never edit a
 * released migration: add the next number. The folder is read here rather than by Kysely's
 * FileMigrationProvider because its `import()` runs inside node_modules, where the test runner's
 * TypeScript loader does not reach.
 */
export const migrationProvider: MigrationProvider = {
  async getMigrations(): Promise<Record<string, Migration>> {
    const migrations: Record<string, Migration> = {};
    for (const file of (await readdir(folder)).sort()) {
      const name = MIGRATION_FILE.exec(file)?.[1];
      if (!name) continue;
      const module = (await import(new URL(file, folder).href)) as Partial<Migration>;
      if (typeof module.up !== 'function') throw new Error(`migration ${file} exports no up()`);
      migrations[name] = { up: module.up, ...(module.down ? { down: module.down } : {}) };
    }
    return migrations;
  },
};

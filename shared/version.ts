import { readFileSync } from 'node:fs';

/**
 * The version of pos, read from package.json: one number moves, and `pos --version`, the server's
 * start log, the agent's hello and the store's record of who migrated it all say it. Sources sit
 * one level below the package (`shared/`), the build two (`dist/shared/`).
 */
function readVersion(): string {
  for (const relative of ['../package.json', '../../package.json']) {
    try {
      const manifest = JSON.parse(readFileSync(new URL(relative, import.meta.url), 'utf8')) as { name?: unknown; version?: unknown };
      if (manifest.name === 'pos' && typeof manifest.version === 'string') return manifest.version;
    } catch {
      // Not this level: try the next.
    }
  }
  throw new Error('package.json of pos not found beside shared/version');
}

export const POS_VERSION: string = readVersion();

/** Compares two `major.minor.patch` versions (a pre-release suffix is ignored): negative, 0 or positive. */
export function compareVersions(a: string, b: string): number {
  const parts = (v: string) => v.split(/[-+]/, 1)[0]!.split('.').map((n) => Number.parseInt(n, 10) || 0);
  const [x, y] = [parts(a), parts(b)];
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const d = (x[i] ?? 0) - (y[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

// `npm install`'s build step (the `prepare` script). npm also runs it whenever it installs this
// directory as a package: `npx pos` does that, once per user, and a full build there took 13 s.
// So it builds only when dist/ is missing or older than a source, as the test run does
// (test/global-setup.ts).
import { execSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SOURCES = ['cli', 'server', 'shared', 'agent', 'simulator', 'bench', 'tsconfig.json', 'tsconfig.build.json'];

function newest(path) {
  const stat = statSync(path, { throwIfNoEntry: false });
  if (!stat) return 0;
  if (!stat.isDirectory()) return stat.mtimeMs;
  let found = stat.mtimeMs;
  for (const entry of readdirSync(path, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
    found = Math.max(found, newest(join(path, entry.name)));
  }
  return found;
}

const built = statSync(join(ROOT, 'dist', 'cli', 'main.js'), { throwIfNoEntry: false })?.mtimeMs ?? 0;
if (built === 0 || Math.max(...SOURCES.map((s) => newest(join(ROOT, s)))) > built) {
  execSync('npm run build', { cwd: ROOT, stdio: 'inherit' });
}

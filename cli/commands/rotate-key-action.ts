import { join } from 'node:path';
import { loadStoreConfig } from '../../shared/config.js';
import { describeKeySource, keySourceOf, type KeySource, readKeySource, replaceKeyFile } from '../../shared/crypto/key-source.js';
import { Keyring } from '../../shared/crypto/keyring.js';
import { mainKeyOf, newMainKeyMaterial } from '../../shared/crypto/main-key.js';
import { systemClock } from '../../shared/time.js';
import { openStoreKeyring, type StoreKeyring } from '../../server/db/encryption.js';
import { ROTATION_SETTLE_MS, rotateMainKey } from '../../server/db/reseal.js';
import { openStore, type Store } from '../../server/db/store.js';
import { resealSimulatorStore } from '../../simulator/index.js';
import { usageError } from '../errors.js';
import type { CliIo } from '../io.js';
import { createOutput, warnOn } from '../output.js';

/**
 * The key a rotation moves to: the one an unfinished rotation was moving to; else a key the
 * operator put first in the source (POS_MASTER_KEY=<new>,<old>, or a key file they edited); else
 * a new one, written first into the key file before anything is sealed under it, so every process
 * reading that file can find it.
 */
async function chooseNewKey(store: Store, cipher: StoreKeyring, source: KeySource): Promise<{ id: string; made: boolean }> {
  const keyring = cipher.keyring;
  const primary = cipher.primaryId;
  const keys = await store.db.selectFrom('encryption_keys').select(['id', 'retired_at']).execute();
  if (keys.some((k) => k.id !== primary && k.retired_at === null)) return { id: primary, made: false };
  const retired = new Set(keys.filter((k) => k.retired_at !== null).map((k) => k.id));
  const first = keyring.ids()[0];
  if (first !== undefined && first !== primary && !retired.has(first)) return { id: first, made: false };
  if (source.kind === 'env') {
    throw usageError(
      'POS_MASTER_KEY holds only the current key: put a new one first (POS_MASTER_KEY=<new>,<current>; make one with `openssl rand -base64 32`), restart every server with both, then run this again (docs/keys.md)',
    );
  }
  const material = newMainKeyMaterial();
  replaceKeyFile(source.path, [material, ...readKeySource(source)]);
  keyring.reload();
  return { id: mainKeyOf(material).id, made: true };
}

/**
 * `pos admin rotate-master-key`: every sealed value sealed again under a new main key, in batches,
 * while servers keep serving (server/db/reseal.ts); then the old keys are retired and a key file
 * keeps only the new one.
 */
/** The longest `--settle-ms`: a rotation that waits longer for a server to switch has a server that never will. */
const MAX_SETTLE_MS = 60_000;

export async function rotateMasterKeyAction(options: { dataDir?: string; databaseUrl?: string; masterKeyFile?: string; settleMs?: string; json?: boolean }, io: CliIo): Promise<void> {
  const settleMs = options.settleMs === undefined ? ROTATION_SETTLE_MS : Number(options.settleMs);
  if (!Number.isInteger(settleMs) || settleMs < 0 || settleMs > MAX_SETTLE_MS) throw usageError(`--settle-ms must be a whole number of milliseconds from 0 to ${MAX_SETTLE_MS}`);
  const config = loadStoreConfig(options, io.env);
  const source = keySourceOf(config);
  const keyring = new Keyring(source);
  const out = createOutput({ json: Boolean(options.json) }, io);
  const store = await openStore(config, { onLooseFile: warnOn(io.stderr) });
  try {
    const cipher = await openStoreKeyring(store, keyring, { now: systemClock.now() });
    const previous = cipher.primaryId;
    const chosen = await chooseNewKey(store, cipher, source);
    const report = await rotateMainKey(store, cipher, chosen.id, { now: () => systemClock.now(), settleMs });
    const simulator = resealSimulatorStore(join(config.dataDir, 'simulator'), keyring);
    let keyFile: string | undefined;
    if (source.kind === 'file') {
      // No value needs the old keys any more: the file keeps the new one only.
      const kept = readKeySource(source).filter((m) => mainKeyOf(m).id === chosen.id);
      if (kept.length === 1) {
        replaceKeyFile(source.path, kept);
        keyFile = source.path;
      }
    }
    const resealed = Object.values(report.resealed).reduce((a, b) => a + (b ?? 0), 0);
    if (out.json) {
      out.printJson({ key_id: report.keyId, previous_key_id: previous, retired_key_ids: report.retired, resealed: report.resealed, simulator_resealed: simulator, key_file: keyFile ?? null });
      return;
    }
    out.line(`Main key rotated: values are now sealed under ${report.keyId}${chosen.made ? ' (a new key)' : ''}; ${resealed} re-sealed.`);
    if (report.retired.length > 0) out.line(`Retired: ${report.retired.join(', ')}. No value needs ${report.retired.length === 1 ? 'it' : 'them'} any more.`);
    if (keyFile) out.line(`${keyFile} now holds only the new key: back it up. Database backups made before now still need the old key file.`);
    else out.line(`${describeKeySource(source)} can now hold just the new key (restart servers with it when convenient). Database backups made before now still need the old key.`);
  } finally {
    await store.close();
  }
}

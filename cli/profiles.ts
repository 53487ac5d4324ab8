import { join } from 'node:path';
import { Low } from 'lowdb';
import { DEFAULT_SERVER_URL } from '../shared/config.js';
import { checkPrivate, createPrivateDir, PrivateJsonFile, type LooseFileReport } from '../shared/files.js';

/**
 * Named profiles in `<config dir>/config.json` (lowdb): a server URL and an API key each, so
 * `pos login` once and every later command knows where to go. The file holds secret keys, so it
 * and its directory are kept readable by their owner only (shared/files.ts).
 */
export interface Profile {
  server?: string;
  api_key?: string;
  merchant_id?: string;
  business_name?: string;
  /** `pos up`'s counter key (rk_test_…, preset counter): what its agent and counter TUI use instead of api_key. */
  counter_key?: string;
}

export interface ConfigFile {
  current_profile: string;
  profiles: Record<string, Profile>;
}

export const DEFAULT_PROFILE = 'default';
export const PROFILE_KEYS = ['server', 'api_key', 'merchant_id', 'business_name', 'counter_key'] as const;
export type ProfileKey = (typeof PROFILE_KEYS)[number];

export function isProfileKey(key: string): key is ProfileKey {
  return (PROFILE_KEYS as readonly string[]).includes(key);
}

export function configFilePath(configDir: string): string {
  return join(configDir, 'config.json');
}

export class ProfileStore {
  private constructor(
    readonly path: string,
    private readonly db: Low<ConfigFile>,
  ) {}

  /**
   * Reads the profiles; creates nothing until a write. `onLooseFile` hears of the directory or file
   * found open to other users (and made owner-only, when ours).
   */
  static async open(configDir: string, onLooseFile?: LooseFileReport): Promise<ProfileStore> {
    const path = configFilePath(configDir);
    checkPrivate(configDir, onLooseFile);
    checkPrivate(path, onLooseFile);
    // Not lowdb's JSONFilePreset, which swaps in an in-memory adapter whenever NODE_ENV is "test",
    // nor its JSONFile, whose every write makes the file anew with the umask's mode.
    const db = new Low<ConfigFile>(new PrivateJsonFile<ConfigFile>(path), { current_profile: DEFAULT_PROFILE, profiles: {} });
    await db.read();
    db.data.profiles ??= {};
    db.data.current_profile ??= DEFAULT_PROFILE;
    return new ProfileStore(path, db);
  }

  get currentName(): string {
    return this.db.data.current_profile;
  }

  get(name: string): Profile | undefined {
    return this.db.data.profiles[name];
  }

  list(): { name: string; current: boolean; profile: Profile }[] {
    return Object.entries(this.db.data.profiles).map(([name, profile]) => ({ name, current: name === this.currentName, profile }));
  }

  async update(name: string, patch: Partial<Profile>): Promise<Profile> {
    const next: Profile = { ...this.db.data.profiles[name] };
    for (const [k, v] of Object.entries(patch) as [ProfileKey, string | undefined][]) {
      if (v === undefined) delete next[k];
      else next[k] = v;
    }
    this.db.data.profiles[name] = next;
    await this.write();
    return next;
  }

  async use(name: string): Promise<void> {
    this.db.data.current_profile = name;
    await this.write();
  }

  async remove(name: string): Promise<boolean> {
    if (!this.db.data.profiles[name]) return false;
    delete this.db.data.profiles[name];
    await this.write();
    return true;
  }

  private async write(): Promise<void> {
    // Checked when opened; here only made when missing.
    createPrivateDir(join(this.path, '..'));
    await this.db.write();
  }
}

/** The server and key a command uses: flags and environment first, then the profile, then the default URL. */
export interface Resolved {
  profileName: string;
  server: string;
  apiKey: string | undefined;
  /** --profile / POS_PROFILE named a profile the config file does not have. */
  missingProfile: boolean;
}

export function resolveTarget(store: ProfileStore, explicit: { server?: string | undefined; apiKey?: string | undefined; profile?: string | undefined }): Resolved {
  const profileName = explicit.profile ?? store.currentName;
  const stored = store.get(profileName);
  const profile = stored ?? {};
  return {
    profileName,
    server: explicit.server ?? profile.server ?? DEFAULT_SERVER_URL,
    apiKey: explicit.apiKey ?? profile.api_key,
    missingProfile: explicit.profile !== undefined && stored === undefined,
  };
}

/** Why a command has no key to call the API with, and what to do about it. */
export function noKeyMessage(store: ProfileStore, target: Resolved): string {
  if (target.missingProfile) {
    const known = store.list().map((p) => p.name);
    return `no profile "${target.profileName}"${known.length > 0 ? ` (profiles: ${known.join(', ')})` : ''}: create it with \`pos login --profile ${target.profileName} --api-key sk_test_…\`, or name another`;
  }
  return 'no API key: run `pos login --api-key sk_test_…`, pass --api-key, or set POS_API_KEY';
}

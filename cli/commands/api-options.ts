import { type Command, Option } from 'commander';

/** The options every command that talks to a running server takes. */
export function addApiOptions(command: Command): Command {
  return command
    .addOption(new Option('--server <url>', 'API server (env POS_SERVER_URL, default http://127.0.0.1:4242)'))
    .addOption(new Option('--api-key <key>', 'secret API key sk_test_… or sk_live_…, or a restricted key rk_… (env POS_API_KEY)'));
}

export interface ApiFlags {
  server?: string;
  apiKey?: string;
}

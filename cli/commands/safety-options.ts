import { Option } from 'commander';

/** `--yes` on a command that cannot be undone: it asks on a terminal, refuses without one. */
export const yesOption = () => new Option('-y, --yes', 'do it without asking (needed where there is no terminal to ask on)');

/** `--live` on a command that moves money: with a live key (sk_live_, rk_live_) it refuses without it. */
export const liveOption = () => new Option('--live', 'allow moving live money: required when the key is sk_live_… or rk_live_…');

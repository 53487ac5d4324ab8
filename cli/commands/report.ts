import type { Command } from 'commander';
import { lazy } from '../lazy.js';

export function registerReportCommands(program: Command): void {
  const report = program.command('report').description('Close-out reports');
  report
    .command('day')
    .description('End of day: counts and totals of paid, failed, canceled and refunded payments, tips, fees and net, per reader and location; card and cash apart with the cash expected in the drawer (over/short once counted); disputes opened and closed, payouts sent')
    .option('--date <YYYY-MM-DD>', "the business day, in the location's time zone and from the hour its day ends (default: the one under way)")
    .option('--location <location>', 'only this location (uuid or name)')
    .option('--csv', 'print CSV (plain decimal amounts) for a spreadsheet')
    .option('--float <amount>', "the cash the drawer started the day with (added to the expected cash)")
    .option('--counted-cash <amount>', 'the cash counted in the drawer at the close: prints the over/short against the expected cash')
    .addHelpText('after', '\nExamples:\n  pos report day\n  pos report day --float 100 --counted-cash 412.35\n  pos report day --date 2026-11-21 --csv > close-out.csv')
    .action(lazy(async () => (await import('./report-action.js')).reportDay));
}

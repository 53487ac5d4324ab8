import type { CliContext } from '../context.js';
import { usageError } from '../errors.js';
import { parseDrawerAmount } from '../amount.js';
import { businessDayWords, dayBounds, loadDayReport, REPORT_COLUMNS, reportCsv, reportRows, shopLines, tenderLines, type DayReport } from '../report.js';

export async function reportDay(_args: [], options: { date?: string; location?: string; csv?: boolean; float?: string; countedCash?: string }, ctx: CliContext): Promise<void> {
  // Without --date: the business day under way at the location (or the shop), in its own zone.
  const date = options.date;
  if (date !== undefined) {
    try {
      dayBounds(date);
    } catch {
      throw usageError(`--date must be a real day written YYYY-MM-DD, not "${date}"`);
    }
  }
  let report: DayReport;
  try {
    const needsCurrency = options.float !== undefined || options.countedCash !== undefined;
    const currency = needsCurrency ? (await ctx.api.merchant()).data.default_currency : 'usd';
    report = await loadDayReport(ctx.api, date, options.location, {
      float: options.float === undefined ? undefined : parseDrawerAmount(options.float, currency),
      countedCash: options.countedCash === undefined ? undefined : parseDrawerAmount(options.countedCash, currency),
    });
  } catch (err) {
    if (err instanceof Error && err.message.startsWith('no location')) throw usageError(err.message);
    throw err;
  }
  if (ctx.out.json) ctx.out.printJson({ data: report });
  else if (options.csv) ctx.io.stdout.write(reportCsv(report));
  else {
    ctx.out.line(`Close-out for ${report.date} (${report.currency.toUpperCase()}; ${businessDayWords(report)})`);
    ctx.out.table(reportRows(report), REPORT_COLUMNS);
    for (const line of tenderLines(report)) ctx.out.line(line);
    for (const line of shopLines(report)) ctx.out.line(line);
    if (report.other_currency_count) ctx.out.line(`${report.other_currency_count} payment(s) in other currencies are not in these totals.`);
  }
}

import { Option } from 'commander';

/**
 * The one set of flags every list takes, as its API pages it: `--limit` (items a page) and `--all`
 * everywhere; `--page` where the API numbers its pages, `--starting-after` where it takes a cursor.
 * A list the API answers whole takes `--all` too (it is what it does anyway), so a script can pass
 * it to every list.
 */
export interface ListFlags {
  limit?: string;
  page?: string;
  size?: string;
  startingAfter?: string;
  all?: boolean;
}

export const limitOption = () => new Option('--limit <n>', 'items a page, 1 to 100 (default 10)');
export const pageOption = () => new Option('--page <n>', 'page number, from 1 (default 1)');
/** `--size` is kept, out of the help, for scripts written before `--limit`. */
export const sizeOption = () => new Option('--size <n>', 'the same as --limit').hideHelp();
export const startingAfterOption = () => new Option('--starting-after <id>', 'the page after this item (the id of the last one you have)');
export const allOption = () => new Option('--all', 'every page, one after the other (--format jsonl prints each page as it arrives)');
export const wholeListAllOption = () => new Option('--all', 'every item (the API answers them all at once)');

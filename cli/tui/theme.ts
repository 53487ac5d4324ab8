/** Colours of the counter; with NO_COLOR every one is undefined and Ink prints plain text. */
export interface Theme {
  ok?: string;
  bad?: string;
  warn?: string;
  dim?: boolean;
  accent?: string;
  banner?: string;
}

export function theme(color: boolean): Theme {
  if (!color) return {};
  return { ok: 'green', bad: 'red', warn: 'yellow', dim: true, accent: 'cyan', banner: 'yellow' };
}

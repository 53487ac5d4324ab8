import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../cli/main.js';

/**
 * docs/cli.md's command reference against the program itself (commander's tree, as `pos --help`
 * prints it): every command a row, every flag of it in that row, and nothing the program lacks.
 */

const DOC = new URL('../docs/cli.md', import.meta.url);

function isHidden(command: Command): boolean {
  return Boolean((command as unknown as { _hidden?: boolean })._hidden);
}

function flagsOf(command: Command): string[] {
  return command.options
    .filter((o) => !o.hidden && o.long && o.long !== '--version')
    .map((o) => o.long as string)
    .sort();
}

/** `pos …` → its flags, for every command that runs something or takes flags of its own. */
export function reference(program: Command): Map<string, string[]> {
  const rows = new Map<string, string[]>([['pos', flagsOf(program)]]);
  const walk = (command: Command, path: string) => {
    for (const child of command.commands.filter((c) => !isHidden(c))) {
      const childPath = `${path} ${child.name()}`;
      if (child.commands.length === 0 || flagsOf(child).length > 0) rows.set(childPath, flagsOf(child));
      walk(child, childPath);
    }
  };
  walk(program, 'pos');
  return rows;
}

/** The rows of the "Command reference" table: `| \`pos x y\` | --a --b | … |`. */
function documented(text: string): Map<string, string[]> {
  const section = text.split(/^## Command reference.*$/m)[1]?.split(/^## /m)[0] ?? '';
  const rows = new Map<string, string[]>();
  for (const line of section.split('\n')) {
    const match = /^\| `(pos[^`]*)` \| ([^|]*) \|/.exec(line);
    if (match) rows.set(match[1] as string, [...(match[2] as string).matchAll(/`(--[\w-]+)`/g)].map((m) => m[1] as string).sort());
  }
  return rows;
}

describe('docs/cli.md', () => {
  const program = reference(buildProgram());
  const docs = documented(readFileSync(DOC, 'utf8'));

  it('has a command reference', () => {
    expect(docs.size).toBeGreaterThan(50);
  });

  it('names every command of the program, and no command it lacks', () => {
    const missing = [...program.keys()].filter((c) => !docs.has(c));
    const extra = [...docs.keys()].filter((c) => !program.has(c));
    expect({ missing, extra }).toEqual({ missing: [], extra: [] });
  });

  it('gives every command exactly the flags it takes', () => {
    const wrong = [...program].filter(([c, flags]) => docs.has(c) && docs.get(c)?.join(' ') !== flags.join(' ')).map(([c, flags]) => ({ command: c, program: flags, docs: docs.get(c) }));
    expect(wrong).toEqual([]);
  });

  it('catches a command or a flag left out', () => {
    const text = readFileSync(DOC, 'utf8');
    const withoutRefund = documented(text.replace(/^\| `pos refund` .*\n/m, ''));
    expect(withoutRefund.has('pos refund')).toBe(false);
    const withoutYes = documented(text.replace(/^(\| `pos refund` \|[^|]*)`--yes`/m, '$1'));
    expect(withoutYes.get('pos refund')).not.toContain('--yes');
    expect(program.get('pos refund')).toContain('--yes');
  });
});

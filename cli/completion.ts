import type { Command } from 'commander';
import { usageError } from './errors.js';

/**
 * Shell completion generated from the commander tree itself, so every command (including the ones
 * other groups register) completes without a hand-kept list: subcommand names, then long options.
 */

/** Flags whose value is a name the server (or the profile file) knows: `pos __complete` lists them. */
const NAMED = [
  ['--reader', 'readers'],
  ['--location', 'locations'],
  ['--profile', 'profiles'],
] as const;

interface Node {
  path: string;
  words: string[];
  /** What fish offers apart: subcommand names as arguments, options (without their dashes) as options. */
  subcommands: string[];
  options: string[];
}

function walk(command: Command, path: string, globals: string[], out: Node[]): void {
  const visible = command.commands.filter((c) => !(c as unknown as { _hidden?: boolean })._hidden);
  const options = command.options.map((o) => o.long).filter((l): l is string => Boolean(l));
  const subcommands = visible.flatMap((c) => [c.name(), ...c.aliases()]);
  out.push({ path, words: [...subcommands, ...options, ...globals, '--help'], subcommands, options });
  for (const child of visible) {
    for (const name of [child.name(), ...child.aliases()]) walk(child, `${path} ${name}`, globals, out);
  }
}

function table(program: Command): Node[] {
  const globals = program.options.map((o) => o.long).filter((l): l is string => Boolean(l));
  const nodes: Node[] = [];
  walk(program, 'pos', [], nodes);
  return nodes.map((n) => (n.path === 'pos' ? n : { ...n, words: [...n.words, ...globals] })).map((n) => ({ ...n, words: [...new Set(n.words)] }));
}

/** What `pos api` takes first besides its flags: a method, or an operationId the server's document lists (`pos __complete operations`). */
const API_FIRST = 'GET POST DELETE $(pos __complete operations 2>/dev/null)';

function shellCase(nodes: Node[], indent: string): string {
  return nodes.map((n) => `${indent}"${n.path}") candidates="${n.words.join(' ')}${n.path === 'pos api' ? ` ${API_FIRST}` : ''}" ;;`).join('\n');
}

function knownPaths(nodes: Node[]): string {
  return nodes.filter((n) => n.path !== 'pos').map((n) => `"${n.path}"`).join('|');
}

export function completionScript(shell: string, program: Command): string {
  const nodes = table(program);
  const walkLoop = (first: string, last: string, word: string) => `  for ((i=${first}; i<${last}; i++)); do
    w=${word}
    [[ "$w" == -* ]] && continue
    case "$cmdpath $w" in
      ${knownPaths(nodes)}) cmdpath="$cmdpath $w" ;;
    esac
  done
  case "$cmdpath" in
${shellCase(nodes, '    ')}
    *) candidates="" ;;
  esac`;
  if (shell === 'bash') {
    return `# pos completion for bash: source it, or save it as ~/.local/share/bash-completion/completions/pos
_pos() {
  local cur cmdpath w i candidates
  cur="\${COMP_WORDS[COMP_CWORD]}"
  case "\${COMP_WORDS[COMP_CWORD-1]}" in
${NAMED.map(([flag, what]) => `    ${flag}) local IFS=$'\\n'; COMPREPLY=( $(compgen -W "$(pos __complete ${what} 2>/dev/null)" -- "$cur") ); return ;;`).join('\n')}
  esac
  cmdpath="pos"
${walkLoop('1', 'COMP_CWORD', '"${COMP_WORDS[i]}"')}
  COMPREPLY=( $(compgen -W "$candidates" -- "$cur") )
}
complete -o default -F _pos pos
`;
  }
  if (shell === 'zsh') {
    return `#compdef pos
# pos completion for zsh: save it as _pos in a directory of $fpath, or source it after compinit
_pos() {
  local cmdpath="pos" w i candidates
  case "\${words[CURRENT-1]}" in
${NAMED.map(([flag, what]) => `    ${flag}) compadd -- "\${(@f)$(pos __complete ${what} 2>/dev/null)}"; return ;;`).join('\n')}
  esac
${walkLoop('2', 'CURRENT', '"${words[i]}"')}
  compadd -- \${=candidates}
}
if [[ "\${funcstack[1]}" == "_pos" ]]; then _pos "$@"; else compdef _pos pos; fi
`;
  }
  if (shell === 'fish') return fishScript(nodes);
  throw usageError(`no completion for "${shell}": bash, zsh or fish`);
}

/**
 * fish: `__pos_path` walks the words typed so far to the deepest command they name (as the bash
 * loop does), and each command offers its subcommands and options only there. Program-wide options
 * are offered everywhere.
 */
function fishScript(nodes: Node[]): string {
  const quote = (text: string) => `'${text.replace(/[\\']/g, (c) => `\\${c}`)}'`;
  const root = nodes.find((n) => n.path === 'pos');
  const lines = [
    '# pos completion for fish: save it as ~/.config/fish/completions/pos.fish',
    'function __pos_path',
    '    set -l words (commandline -opc)',
    '    set -e words[1]',
    '    set -l path pos',
    '    for w in $words',
    "        string match -q -- '-*' $w; and continue",
    '        switch "$path $w"',
    `            case ${nodes
      .filter((n) => n.path !== 'pos')
      .map((n) => quote(n.path))
      .join(' ')}`,
    '                set path "$path $w"',
    '        end',
    '    end',
    '    echo $path',
    'end',
    'complete -c pos -f',
    ...NAMED.map(([flag, what]) => `complete -c pos -l ${flag.slice(2)} -x -a '(pos __complete ${what} 2>/dev/null)'`),
    ...(root?.options ?? []).map((o) => `complete -c pos -l ${o.slice(2)}`),
  ];
  for (const node of nodes) {
    const when = `-n ${quote(`test (__pos_path) = ${quote(node.path)}`)}`;
    if (node.subcommands.length) lines.push(`complete -c pos ${when} -a ${quote(node.subcommands.join(' '))}`);
    if (node.path === 'pos api') lines.push(`complete -c pos ${when} -a ${quote(`GET POST DELETE (pos __complete operations 2>/dev/null)`)}`);
    if (node.path !== 'pos') for (const option of node.options) lines.push(`complete -c pos ${when} -l ${option.slice(2)}`);
  }
  return `${lines.join('\n')}\n`;
}

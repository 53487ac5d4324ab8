import type { Readable, Writable } from 'node:stream';
import type { Command } from 'commander';
import type { Env } from '../shared/config.js';

/**
 * What one run of `pos` reads and writes outside itself: its streams and its environment. The
 * binary runs on the process's own (bin/pos.js); a test runs the same program in its own process on
 * streams it reads back and an environment it chose (test/helpers/cli.ts, runCli).
 */
export interface CliIo {
  readonly stdout: Writable & { isTTY?: boolean };
  readonly stderr: Writable & { isTTY?: boolean };
  readonly stdin: Readable & { isTTY?: boolean };
  readonly env: Env;
}

export function processIo(): CliIo {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    // Read only by the commands that ask whether they have a terminal: touching process.stdin opens it.
    get stdin() {
      return process.stdin;
    },
    env: process.env,
  };
}

const programs = new WeakMap<Command, CliIo>();

/** Gives a program its run's io; its commands find it with `ioOf`. */
export function attachIo(program: Command, io: CliIo): void {
  programs.set(program, io);
}

/** The io of the run a command belongs to (its program's, set by buildProgram). */
export function ioOf(command: Command): CliIo {
  let root = command;
  while (root.parent) root = root.parent;
  const io = programs.get(root);
  if (!io) throw new Error(`command ${command.name()} is not part of a program built by buildProgram`);
  return io;
}

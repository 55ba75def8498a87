/**
 * Every message names a place that exists: a "Settings → Name" in a core message is a heading or field label
 * the popover shows (in English), and a `--flag` in a CLI message is one the command's `--help` lists. The
 * messages are read as the compiler sees them (string and template literals, never comments), so a renamed
 * section or flag fails here instead of sending a producer to look for something that is not there.
 */
import { readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { MAIN_HELP } from '../../electron/cli.js';
import type { Command } from '../../electron/cli/command.js';
import { importsOf, sourceFiles } from './imports.js';
import { SETTINGS_FIELD } from '../../electron/core/tunnels/unusable.js';

const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const CLI = join(ROOT, 'electron/cli');
/** Where core messages are written: the core (its coded messages in core/notes.ts among them) and the CLI. */
const MESSAGE_FILES = [
  // The Korean notes (core/notes-ko.ts) say what the English ones say, which are checked here.
  ...sourceFiles(join(ROOT, 'electron/core')).filter((file) => !file.endsWith('notes-ko.ts')),
  ...sourceFiles(CLI),
  join(ROOT, 'electron/cli.ts'),
];

/** The text of every string and template literal in `file` (a `${…}` reads as "…"); sentences only. */
function messagesOf(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const out: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) out.push(node.text);
    else if (ts.isTemplateExpression(node)) {
      out.push(node.head.text + node.templateSpans.map((span) => `…${span.literal.text}`).join(''));
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  // A lone '--team' is a default argument, '--expose-gc' a V8 switch: messages are sentences.
  return out.filter((text) => text.includes(' '));
}

/** Every short leaf string of a dictionary subtree: its headings and field labels (sentences end with "."). */
function labels(node: unknown): string[] {
  if (typeof node === 'string') return node.trim().endsWith('.') ? [] : [node];
  if (typeof node !== 'object' || node === null) return [];
  return Object.values(node).flatMap(labels);
}

/** The popover's English dictionary (a renderer file: loaded by path, outside this project's type check). */
async function english(): Promise<{ settings: unknown; studio: unknown }> {
  const module = (await import(join(ROOT, 'renderer/src/locales/en.ts'))) as {
    en: { settings: unknown; studio: unknown };
  };
  return module.en;
}

describe('messages name what exists', () => {
  it('every "Settings → Name" is a heading or field label of the English Settings view', async () => {
    const en = await english();
    // A message may leave out a label's "(optional)".
    const known = new Set(
      [...labels(en.settings), ...labels(en.studio)].flatMap((label) => [label, label.replace(/ \(optional\)$/, '')]),
    );
    const wrong: string[] = [];
    // The fields an unusable tunnel setting names (a template's value in tunnels/unusable.ts).
    for (const field of Object.values(SETTINGS_FIELD)) if (!known.has(field)) wrong.push(`unusable.ts: ${field}`);
    let seen = 0;
    for (const file of MESSAGE_FILES) {
      for (const text of messagesOf(file)) {
        for (const match of text.matchAll(
          /Settings → ([^.,:;?()—`"]+?)(?=\s*(?:[.,:;?—`"]|$|\(|\s+or\s))(?:\s*\(([^)]*)\))?/g,
        )) {
          seen++;
          const [, name = '', detail] = match;
          // "Section → Field" goes down one level; "…" stands for a template's value (checked below).
          // `…` is a template's `${…}`, `{name}` a note's param: the place is filled in, not named.
          const path = name.split(' → ').filter((part) => part.trim() !== '…' && !/^\{\w+\}$/.test(part.trim()));
          // "(My own public URL)": the field or choice inside the section; "(or set …)" is an alternative.
          const named = detail && !/^or\b/.test(detail) ? [...path, detail] : path;
          for (const n of named) if (!known.has(n.trim())) wrong.push(`${basename(file)}: Settings → ${n.trim()}`);
        }
      }
    }
    expect(seen).toBeGreaterThan(5);
    expect(wrong).toEqual([]);
  });

  it('every --flag in a CLI message is in the help of the command it belongs to', async () => {
    const commands = [...MAIN_HELP.matchAll(/^ {2}([a-z]+) {2,}/gm)].map((m) => m[1] ?? '');
    const global = new Set(MAIN_HELP.match(/--[a-z][a-z-]*/g));
    const help = new Map<string, Set<string>>();
    for (const name of commands) {
      const command = ((await import(join(CLI, `${name}.ts`))) as { default: Command }).default;
      help.set(name, new Set([...global, ...(command.help.match(/--[a-z][a-z-]*/g) ?? [])]));
    }
    const commandFile = new Map(commands.map((name) => [join(CLI, `${name}.ts`), name]));
    const wrong: string[] = [];
    let seen = 0;
    for (const file of MESSAGE_FILES) {
      // A command's own file answers to its help; a shared helper to the help of a command that imports it;
      // the core to any command's (which one depends on the caller).
      const own = commandFile.get(file);
      const owners = own
        ? [own]
        : file.startsWith(`${CLI}/`)
          ? commands.filter((name) => importsOf(join(CLI, `${name}.ts`)).includes(file))
          : commands;
      for (const text of messagesOf(file)) {
        const named = new Map<string, string[]>();
        // "tally login --team URL" names its command; the flags after it belong to that one.
        for (const m of text.matchAll(/\btally ([a-z]+)((?: +(?!tally\b)[^\s"`]+)*)/g)) {
          if (!help.has(m[1] ?? '')) continue;
          for (const flag of m[2]?.match(/--[a-z][a-z-]*/g) ?? []) named.set(flag, [m[1] ?? '']);
        }
        for (const flag of text.match(/--[a-z][a-z-]*/g) ?? []) {
          seen++;
          const where = named.get(flag) ?? owners;
          if (!where.some((name) => help.get(name)?.has(flag))) {
            wrong.push(`${basename(file)}: ${flag} is not in the help of ${where.join(', ') || 'any command'}`);
          }
        }
      }
    }
    expect(seen).toBeGreaterThan(20);
    expect(wrong).toEqual([]);
  });
});

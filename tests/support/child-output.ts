/**
 * TEST HELPER (not used by the app): a child process run to its end, with everything it wrote, for the specs
 * that judge a command by its exit code and output (the entry point, a state folder it cannot use, a keychain
 * it cannot reach).
 */
import { spawn, type SpawnOptions } from 'node:child_process';

export interface ChildOutput {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `command` with `args` (stdin closed) and resolves once it has exited and its output is read. */
export function runToEnd(command: string, args: readonly string[], options: SpawnOptions = {}): Promise<ChildOutput> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** pino-roll ships no types: the part of its API core/log-file.ts uses (a SonicBoom stream that rotates). */
declare module 'pino-roll' {
  import type SonicBoom from 'sonic-boom';

  interface PinoRollOptions {
    file: string | (() => string);
    size?: string | number;
    frequency?: 'daily' | 'hourly' | number;
    extension?: string;
    limit?: { count?: number; removeOtherLogFiles?: boolean };
    symlink?: boolean;
    dateFormat?: string;
    mkdir?: boolean;
    sync?: boolean;
  }

  export default function pinoRoll(options: PinoRollOptions): Promise<SonicBoom>;
}

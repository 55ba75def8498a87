/**
 * The sidecar `<part>.json` beside a partial download: which server version the bytes came from (ETag,
 * Last-Modified, size) and, for segmented downloads, how far each segment got. It is what makes a resume
 * after a crash or `kill -9` safe: without it the bytes of a segmented part could not be trusted.
 */
import type { DownloadFs } from './download-fs.js';
import { removeIfExists, writeFileAtomic } from './download-fs.js';

export interface Segment {
  /** First byte of the segment. */
  start: number;
  /** One past the last byte (exclusive). */
  end: number;
  /** Next byte to fetch: everything in [start, pos) is durably on disk. */
  pos: number;
}

export interface PartState {
  version: 1;
  mode: 'sequential' | 'segmented';
  etag: string | null;
  lastModified: string | null;
  total: number | null;
  segments?: Segment[];
  /** Written just before the part is renamed: lets a restart recognise a recording that was already saved. */
  committed?: { path: string; bytes: number; checks?: ('size' | 'md5' | 'repeat' | 'short')[] } | null;
}

// Hand-written checks rather than a schema library: the engine runs in a crash-test child and a memory
// benchmark where every loaded megabyte shows, and the shape is small and our own.
const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
const isText = (v: unknown): v is string | null => v === null || typeof v === 'string';

function parsePartState(data: unknown): PartState | null {
  if (typeof data !== 'object' || data === null) return null;
  const o = data as Record<string, unknown>;
  if (o.version !== 1 || (o.mode !== 'sequential' && o.mode !== 'segmented')) return null;
  if (!isText(o.etag) || !isText(o.lastModified) || !(o.total === null || isCount(o.total))) return null;
  const state: PartState = { version: 1, mode: o.mode, etag: o.etag, lastModified: o.lastModified, total: o.total };
  if (o.segments !== undefined) {
    if (!Array.isArray(o.segments)) return null;
    const segments: Segment[] = [];
    for (const seg of o.segments as unknown[]) {
      const s = seg as Record<string, unknown> | null;
      if (!s || !isCount(s.start) || !isCount(s.end) || !isCount(s.pos)) return null;
      segments.push({ start: s.start, end: s.end, pos: s.pos });
    }
    state.segments = segments;
  }
  if (o.committed !== undefined && o.committed !== null) {
    const c = o.committed as Record<string, unknown>;
    if (typeof c.path !== 'string' || !isCount(c.bytes)) return null;
    state.committed = { path: c.path, bytes: c.bytes };
    if (Array.isArray(c.checks))
      state.committed.checks = c.checks.filter((k) => k === 'size' || k === 'md5' || k === 'repeat' || k === 'short');
  }
  return state;
}

/** Path of the sidecar for a part file. */
export function statePathFor(partPath: string): string {
  return `${partPath}.json`;
}

/** The sidecar, or null when absent or unreadable (then the part is treated as a plain prefix). */
export async function readPartState(fsx: DownloadFs, partPath: string): Promise<PartState | null> {
  let text: string;
  try {
    text = await fsx.readFile(statePathFor(partPath), 'utf8');
  } catch {
    return null;
  }
  try {
    const state = parsePartState(JSON.parse(text));
    if (!state) return null;
    // A segment list that does not tile [0, total) would let holes pass as data: distrust it entirely.
    if (state.mode === 'segmented' && !segmentsAreConsistent(state)) return null;
    return state;
  } catch {
    return null;
  }
}

function segmentsAreConsistent(state: PartState): boolean {
  if (state.total === null || !state.segments || state.segments.length === 0) return false;
  const sorted = [...state.segments].sort((a, b) => a.start - b.start);
  let expected = 0;
  for (const seg of sorted) {
    if (seg.start !== expected || seg.pos < seg.start || seg.pos > seg.end || seg.end < seg.start) return false;
    expected = seg.end;
  }
  return expected === state.total;
}

/** Writes the sidecar atomically and durably. */
export async function writePartState(fsx: DownloadFs, partPath: string, state: PartState): Promise<void> {
  await writeFileAtomic(fsx, statePathFor(partPath), `${JSON.stringify(state)}\n`);
}

/** Removes the sidecar (and a stray temp file from an interrupted write). */
export async function removePartState(fsx: DownloadFs, partPath: string): Promise<void> {
  await removeIfExists(fsx, statePathFor(partPath));
  await removeIfExists(fsx, `${statePathFor(partPath)}.tmp`);
}

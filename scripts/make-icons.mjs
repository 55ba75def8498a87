#!/usr/bin/env node
// Draws Tally's app and tray icons into build/ as PNG files, with nothing but Node: shapes are sampled
// 8×8 times per pixel for smooth edges, then written as RGBA PNG with zlib. The output is deterministic,
// so the committed PNGs can be regenerated and compared byte for byte.
//
//   build/icon.png                         1024×1024 app icon (electron-builder derives .icns/.ico from it)
//   build/tray/trayTemplate.png, @2x       macOS menu-bar template (black + alpha; macOS tints it)
//   build/tray/tray-<state>.png, @2x       coloured icons for Windows/Linux: idle, live,
//                                          downloading (health ok), warning, error (the health's other states)
//
// The glyph is a tally light: a dot with a broadcast wave on each side.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { deflateSync } from 'node:zlib';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const SAMPLES = 8;

// ---------------------------------------------------------------------------------------------------
// PNG encoding

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(buf) {
  let c = 0xffffffff;
  for (const byte of buf) c = CRC_TABLE[(c ^ byte) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type, data) {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'ascii');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}

/** Encodes straight (non-premultiplied) RGBA pixels as a PNG file. */
function encodePng(width, height, rgba) {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 6; // colour type RGBA
  const raw = Buffer.alloc((width * 4 + 1) * height);
  for (let y = 0; y < height; y++) {
    raw[y * (width * 4 + 1)] = 0; // filter: none
    rgba.copy(raw, y * (width * 4 + 1) + 1, y * width * 4, (y + 1) * width * 4);
  }
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(raw, { level: 9 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

// ---------------------------------------------------------------------------------------------------
// Drawing: a scene is a list of layers { inside(x, y) -> boolean, color: [r, g, b, a] } in unit space
// (0..1 on both axes), painted back to front with "source over" compositing.

function render(size, layers) {
  const out = Buffer.alloc(size * size * 4);
  for (let py = 0; py < size; py++) {
    for (let px = 0; px < size; px++) {
      // Premultiplied accumulation keeps the edge colours clean.
      let r = 0;
      let g = 0;
      let b = 0;
      let a = 0;
      for (const layer of layers) {
        let hits = 0;
        for (let sy = 0; sy < SAMPLES; sy++) {
          for (let sx = 0; sx < SAMPLES; sx++) {
            const x = (px + (sx + 0.5) / SAMPLES) / size;
            const y = (py + (sy + 0.5) / SAMPLES) / size;
            if (layer.inside(x, y)) hits++;
          }
        }
        const cover = (hits / (SAMPLES * SAMPLES)) * (layer.color[3] / 255);
        r = layer.color[0] * cover + r * (1 - cover);
        g = layer.color[1] * cover + g * (1 - cover);
        b = layer.color[2] * cover + b * (1 - cover);
        a = cover + a * (1 - cover);
      }
      const i = (py * size + px) * 4;
      out[i] = a > 0 ? Math.round(r / a) : 0;
      out[i + 1] = a > 0 ? Math.round(g / a) : 0;
      out[i + 2] = a > 0 ? Math.round(b / a) : 0;
      out[i + 3] = Math.round(a * 255);
    }
  }
  return encodePng(size, size, out);
}

const disc = (cx, cy, r) => (x, y) => (x - cx) ** 2 + (y - cy) ** 2 <= r * r;
const not = (f) => (x, y) => !f(x, y);
const and =
  (...fs) =>
  (x, y) =>
    fs.every((f) => f(x, y));
const or =
  (...fs) =>
  (x, y) =>
    fs.some((f) => f(x, y));
const rect = (x0, y0, x1, y1) => (x, y) => x >= x0 && x <= x1 && y >= y0 && y <= y1;

/** An × centred at (cx, cy): two bars of half-length `r` and half-width `w` along the diagonals. */
function cross(cx, cy, r, w) {
  return (x, y) => {
    const dx = x - cx;
    const dy = y - cy;
    const u = (dx + dy) / Math.SQRT2;
    const v = (dx - dy) / Math.SQRT2;
    return (Math.abs(u) <= r && Math.abs(v) <= w) || (Math.abs(v) <= r && Math.abs(u) <= w);
  };
}

/** Left and right arcs of a ring around (cx, cy), each spanning ±`halfAngle` radians from horizontal. */
function waves(cx, cy, r0, r1, halfAngle) {
  return (x, y) => {
    const d = Math.hypot(x - cx, y - cy);
    if (d < r0 || d > r1) return false;
    const angle = Math.atan2(Math.abs(y - cy), Math.abs(x - cx));
    return angle <= halfAngle;
  };
}

/** The tally-light glyph in unit space, centred at (cx, cy) with overall radius `s`. */
function glyph(cx, cy, s) {
  return {
    dot: disc(cx, cy, s * 0.34),
    dotHole: disc(cx, cy, s * 0.17),
    waves: waves(cx, cy, s * 0.58, s * 0.8, Math.PI / 4),
  };
}

const rgb = (hex, alpha = 255) => [
  parseInt(hex.slice(1, 3), 16),
  parseInt(hex.slice(3, 5), 16),
  parseInt(hex.slice(5, 7), 16),
  alpha,
];

const BLACK = rgb('#000000');
const WHITE = rgb('#ffffff');
const COLORS = {
  idle: rgb('#8a8f98'),
  live: rgb('#e5383b'),
  downloading: rgb('#2f80ed'),
  warning: rgb('#f2a60d'),
  error: rgb('#c62828'),
};

/** Tray scene per state: the shape changes too, so the state does not rest on colour alone. */
function trayScene(state) {
  const g = glyph(0.5, 0.46, 0.62);
  const color = COLORS[state];
  const waveColor = state === 'idle' ? COLORS.idle : rgb('#6b717c');
  const layers = [{ inside: g.waves, color: state === 'live' ? color : waveColor }];
  switch (state) {
    case 'idle':
      layers.push({ inside: and(g.dot, not(g.dotHole)), color });
      break;
    case 'live':
      layers.push({ inside: g.dot, color });
      break;
    case 'downloading':
      layers.push({ inside: g.dot, color }, { inside: rect(0.2, 0.86, 0.8, 0.97), color });
      break;
    case 'warning':
      // An exclamation mark in the dot.
      layers.push(
        { inside: g.dot, color },
        { inside: or(rect(0.46, 0.3, 0.54, 0.47), disc(0.5, 0.555, 0.04)), color: WHITE },
      );
      break;
    case 'error':
      // A cross in a larger dot, and no waves: nothing gets through.
      layers.length = 0;
      layers.push({ inside: disc(0.5, 0.46, 0.3), color }, { inside: cross(0.5, 0.46, 0.15, 0.045), color: WHITE });
      break;
  }
  return layers;
}

/** macOS template: black shapes, alpha only matters; macOS paints it for light and dark menu bars. */
function templateScene() {
  const g = glyph(0.5, 0.5, 0.62);
  return [{ inside: or(g.dot, g.waves), color: BLACK }];
}

/** App icon: the glyph in white and red on a dark rounded square. */
function appIconScene() {
  const roundedSquare = (x, y) => {
    const inset = 0.06;
    const radius = 0.2;
    const cx = Math.min(Math.max(x, inset + radius), 1 - inset - radius);
    const cy = Math.min(Math.max(y, inset + radius), 1 - inset - radius);
    return (x - cx) ** 2 + (y - cy) ** 2 <= radius * radius;
  };
  const g = glyph(0.5, 0.5, 0.5);
  return [
    { inside: roundedSquare, color: rgb('#1d1f24') },
    { inside: g.waves, color: WHITE },
    { inside: g.dot, color: COLORS.live },
  ];
}

// ---------------------------------------------------------------------------------------------------

function write(relative, data) {
  const file = join(root, relative);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, data);
  console.log(`wrote ${relative} (${data.length} bytes)`);
}

write('build/icon.png', render(1024, appIconScene()));
write('build/tray/trayTemplate.png', render(16, templateScene()));
write('build/tray/trayTemplate@2x.png', render(32, templateScene()));
for (const state of Object.keys(COLORS)) {
  write(`build/tray/tray-${state}.png`, render(16, trayScene(state)));
  write(`build/tray/tray-${state}@2x.png`, render(32, trayScene(state)));
}

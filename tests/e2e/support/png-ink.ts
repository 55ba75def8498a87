/**
 * Where the ink of a screenshot lies, and what colour one of its pixels is: the rows of a PNG whose pixels differ from its background. Lets a test
 * check that a button's label sits in the middle of the button as drawn, which the DOM cannot say (a text
 * box is centred by its font's ascent and descent, not by where the glyphs are).
 *
 * A minimal PNG reader for what Chromium writes: 8-bit RGB or RGBA, not interlaced.
 */
import { inflateSync } from 'node:zlib';

interface Image {
  width: number;
  height: number;
  /** Bytes per pixel: 3 (RGB) or 4 (RGBA). */
  channels: number;
  pixels: Buffer;
}

function decode(png: Buffer): Image {
  let width = 0;
  let height = 0;
  let channels = 0;
  const data: Buffer[] = [];
  for (let at = 8; at < png.length;) {
    const length = png.readUInt32BE(at);
    const type = png.toString('latin1', at + 4, at + 8);
    const body = png.subarray(at + 8, at + 8 + length);
    if (type === 'IHDR') {
      width = body.readUInt32BE(0);
      height = body.readUInt32BE(4);
      const [depth, colour, , , interlace] = [body[8], body[9], body[10], body[11], body[12]];
      if (depth !== 8 || (colour !== 2 && colour !== 6) || interlace !== 0) {
        throw new Error(`unsupported PNG: depth ${depth}, colour type ${colour}, interlace ${interlace}`);
      }
      channels = colour === 6 ? 4 : 3;
    } else if (type === 'IDAT') data.push(body);
    at += 12 + length;
  }
  const raw = inflateSync(Buffer.concat(data));
  const stride = width * channels;
  const pixels = Buffer.alloc(stride * height);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    for (let x = 0; x < stride; x++) {
      const left = x >= channels ? pixels[y * stride + x - channels]! : 0;
      const up = y > 0 ? pixels[(y - 1) * stride + x]! : 0;
      const upLeft = y > 0 && x >= channels ? pixels[(y - 1) * stride + x - channels]! : 0;
      let predictor = 0;
      if (filter === 1) predictor = left;
      else if (filter === 2) predictor = up;
      else if (filter === 3) predictor = (left + up) >> 1;
      else if (filter === 4) {
        const p = left + up - upLeft;
        const [pa, pb, pc] = [Math.abs(p - left), Math.abs(p - up), Math.abs(p - upLeft)];
        predictor = pa <= pb && pa <= pc ? left : pb <= pc ? up : upLeft;
      }
      pixels[y * stride + x] = (line[x]! + predictor) & 0xff;
    }
  }
  return { width, height, channels, pixels };
}

/**
 * First and last rows (0-based) holding a pixel that differs from the image's top-left pixel by more than
 * `threshold` in any channel, and the image height; null when there is no ink at all.
 */
export function inkRows(png: Buffer, threshold = 60): { top: number; bottom: number; height: number } | null {
  const { width, height, channels, pixels } = decode(png);
  const background = [pixels[0]!, pixels[1]!, pixels[2]!];
  let top = -1;
  let bottom = -1;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * channels;
      if (background.some((c, k) => Math.abs(pixels[i + k]! - c) > threshold)) {
        if (top < 0) top = y;
        bottom = y;
        break;
      }
    }
  }
  return top < 0 ? null : { top, bottom, height };
}

/** The red, green and blue of one pixel (0-based, in the PNG's own pixels). */
export function pixelAt(png: Buffer, x: number, y: number): [number, number, number] {
  const { width, channels, pixels } = decode(png);
  const i = (y * width + x) * channels;
  return [pixels[i]!, pixels[i + 1]!, pixels[i + 2]!];
}

/** WCAG contrast ratio of two sRGB colours (1 = the same, 21 = black on white). */
export function contrast(a: readonly number[], b: readonly number[]): number {
  const luminance = (rgb: readonly number[]) => {
    const [r, g, bl] = rgb.map((c) => {
      const s = c / 255;
      return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r! + 0.7152 * g! + 0.0722 * bl!;
  };
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi! + 0.05) / (lo! + 0.05);
}

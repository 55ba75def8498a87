/**
 * The sandbox's client recordings as real, playable audio: a WebM (Matroska) file with one PCM track
 * (`A_PCM/INT/LIT`, 16 kHz mono 16-bit, as Chromium's MediaRecorder writes for `audio/webm;codecs=pcm`) holding a
 * steady tone whose pitch the seed picks, in 100 ms blocks of 10 s clusters, and a Void element that makes the
 * file exactly the asked size. ffprobe and browsers decode it; the same size and seed always give the same bytes.
 *
 * One function, self-contained and written in plain JavaScript (no helpers, no nested functions), because the web
 * client page runs this very function: its source text (`Function.prototype.toString`) is put into the page.
 */

export function tallyGenerateWebm(size: number, seed: number): Uint8Array {
  // EBML header (DocType "webm"), a Segment of unknown size, and Info (1 ms timecodes, muxer "tally-sandbox").
  const head = [
    0x1a, 0x45, 0xdf, 0xa3, 0x9f, 0x42, 0x86, 0x81, 0x01, 0x42, 0xf7, 0x81, 0x01, 0x42, 0xf2, 0x81, 0x04, 0x42, 0xf3,
    0x81, 0x08, 0x42, 0x82, 0x84, 0x77, 0x65, 0x62, 0x6d, 0x42, 0x87, 0x81, 0x04, 0x42, 0x85, 0x81, 0x02, 0x18, 0x53,
    0x80, 0x67, 0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x15, 0x49, 0xa9, 0x66, 0xa7, 0x2a, 0xd7, 0xb1, 0x83,
    0x0f, 0x42, 0x40, 0x4d, 0x80, 0x8d, 0x74, 0x61, 0x6c, 0x6c, 0x79, 0x2d, 0x73, 0x61, 0x6e, 0x64, 0x62, 0x6f, 0x78,
    0x57, 0x41, 0x8d, 0x74, 0x61, 0x6c, 0x6c, 0x79, 0x2d, 0x73, 0x61, 0x6e, 0x64, 0x62, 0x6f, 0x78,
    // Tracks > TrackEntry: number 1, UID 1, audio, A_PCM/INT/LIT, 16000 Hz, 1 channel, 16 bits.
    0x16, 0x54, 0xae, 0x6b, 0xae, 0xae, 0xac, 0xd7, 0x81, 0x01, 0x73, 0xc5, 0x81, 0x01, 0x83, 0x81, 0x02, 0x86, 0x8d,
    0x41, 0x5f, 0x50, 0x43, 0x4d, 0x2f, 0x49, 0x4e, 0x54, 0x2f, 0x4c, 0x49, 0x54, 0xe1, 0x91, 0xb5, 0x88, 0x40, 0xcf,
    0x40, 0x00, 0x00, 0x00, 0x00, 0x00, 0x9f, 0x81, 0x01, 0x62, 0x64, 0x81, 0x10,
  ];
  const rate = 16000;
  const blockBytes = 3200; // 100 ms
  const blocksPerCluster = 100; // 10 s: block timecodes stay far inside their signed 16 bits
  const total = Math.max(head.length + 9, Math.floor(size));
  const out = new Uint8Array(total);
  out.set(head, 0);
  let at = head.length;
  // Everything after the headers but the closing Void's 9 bytes is audio, as far as whole blocks go.
  let room = total - at - 9;
  const hertz = 200 + ((seed >>> 0) % 401);
  let sample = 0;
  let clusterMs = 0;
  while (room >= 18 + 13 + 2) {
    const cluster = at;
    out[at] = 0x1f;
    out[at + 1] = 0x43;
    out[at + 2] = 0xb6;
    out[at + 3] = 0x75;
    at += 12; // the size (8 bytes) is written once the blocks are in
    out[at] = 0xe7; // Timecode, 4 bytes
    out[at + 1] = 0x84;
    out[at + 2] = (clusterMs >>> 24) & 0xff;
    out[at + 3] = (clusterMs >>> 16) & 0xff;
    out[at + 4] = (clusterMs >>> 8) & 0xff;
    out[at + 5] = clusterMs & 0xff;
    at += 6;
    room -= 18;
    let blocks = 0;
    while (blocks < blocksPerCluster && room >= 13 + 2) {
      let bytes = Math.min(blockBytes, room - 13);
      bytes -= bytes % 2;
      const length = bytes + 4;
      out[at] = 0xa3; // SimpleBlock with an 8-byte size
      out[at + 1] = 0x01;
      for (let i = 0; i < 7; i += 1) out[at + 8 - i] = Math.floor(length / Math.pow(256, i)) & 0xff;
      out[at + 9] = 0x81; // track 1
      out[at + 10] = ((blocks * 100) >>> 8) & 0xff;
      out[at + 11] = (blocks * 100) & 0xff;
      out[at + 12] = 0x80; // keyframe
      at += 13;
      for (let p = 0; p < bytes; p += 2) {
        const value = Math.round(9830 * Math.sin((2 * Math.PI * hertz * sample) / rate));
        const word = value < 0 ? value + 65536 : value;
        out[at + p] = word & 0xff;
        out[at + p + 1] = (word >>> 8) & 0xff;
        sample += 1;
      }
      at += bytes;
      room -= 13 + bytes;
      blocks += 1;
    }
    const clusterSize = at - cluster - 12;
    out[cluster + 4] = 0x01;
    for (let i = 0; i < 7; i += 1) out[cluster + 11 - i] = Math.floor(clusterSize / Math.pow(256, i)) & 0xff;
    clusterMs += blocks * 100;
  }
  // The Void element fills the rest, so the file is exactly `size` bytes.
  const rest = total - at - 9;
  out[at] = 0xec;
  out[at + 1] = 0x01;
  for (let i = 0; i < 7; i += 1) out[at + 8 - i] = Math.floor(rest / Math.pow(256, i)) & 0xff;
  return out;
}

// Reads the Swift test pattern's frame counter (MediaCodecs' TestPatternSource and Barcode) from a
// remote video's canvas, as `TestPatternSource.readFrameCounter` does from a decoded frame: the
// mean luma of each cell's middle, thresholded halfway between black (Y 16) and white (Y 235).
// Injected by the harness: `arguments[0]` is a selector (the canvas, or an element holding one),
// `arguments[1]` whether to return the picture read too (`png`, a data: URL; taken in the same
// task, so no newer frame is drawn in between). Returns {counter, width, height} (counter null
// when the marker or the check bits do not read) and the 32 bits read, or null when there is no
// canvas with a picture.
const [selector, withPicture] = arguments;
const canvas = document.querySelector(`${selector} canvas`) ?? document.querySelector(selector);
if (!(canvas instanceof HTMLCanvasElement) || !canvas.width || !canvas.height) return null;
const { width, height } = canvas;

// Barcode(width:height:): the widest layout (32, 16 or 8 cells a row) whose even-sized cells
// are at least 8 px, else the one with the largest cells.
let best = null;
for (const perRow of [32, 16, 8]) {
  const rows = 32 / perRow;
  const size = Math.min(Math.floor(width / perRow), Math.floor(height / 2 / rows)) & ~1;
  if (best === null || size > best.size) best = { perRow, size };
  if (size >= 8) { best = { perRow, size }; break; }
}
if (best.size < 4) return { counter: null, width, height, bits: '', reason: 'too small for a barcode' };
const { perRow, size } = best;

// The canvas at its native size (the decoded frame's); its RGB is BT.601 full range, turned back
// into the limited-range luma the Swift reader sees.
const pixels = canvas.getContext('2d').getImageData(0, 0, width, height).data;
const png = withPicture ? canvas.toDataURL('image/png') : undefined;
const luma = (x, y) => {
  const i = (y * width + x) * 4;
  return 16 + (65.481 * pixels[i] + 128.553 * pixels[i + 1] + 24.966 * pixels[i + 2]) / 255;
};
const inset = Math.floor(size / 4); // the cells' edges ring most after compression
const side = size - 2 * inset;
const bits = [];
for (let index = 0; index < 32; index++) {
  const left = (index % perRow) * size;
  const top = Math.floor(index / perRow) * size;
  let sum = 0;
  for (let y = top + inset; y < top + inset + side; y++) {
    for (let x = left + inset; x < left + inset + side; x++) sum += luma(x, y);
  }
  bits.push(Math.floor(sum / (side * side)) >= 126);
}

// Barcode.decode: marker 1011, 24 counter bits (most significant first), then the XOR of the
// counter's six nibbles XOR 0101.
const value = (from, to) => bits.slice(from, to).reduce((n, bit) => n * 2 + (bit ? 1 : 0), 0);
const read = bits.map((bit) => (bit ? '1' : '0')).join('');
if (read.slice(0, 4) !== '1011') return { counter: null, width, height, bits: read, png, reason: 'no marker' };
const counter = value(4, 28);
let check = 0;
for (let shift = 0; shift < 24; shift += 4) check ^= (counter >> shift) & 0xf;
if (value(28, 32) !== (check ^ 0b0101)) return { counter: null, width, height, bits: read, png, reason: 'check bits do not match' };
return { counter, width, height, bits: read, png };

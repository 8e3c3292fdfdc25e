// Writes js-numbers.tsv: JSON number texts, a tab, and what JavaScript
// prints for them, `String(JSON.parse(text))`.
// tests/integration/js_numbers.rs checks promptpack's parse and print
// against every row without needing node.
//
// Regenerate (the output is the same on every run: the generator is seeded):
//   node crates/promptpack-core/tests/data/js-numbers.js \
//     > crates/promptpack-core/tests/data/js-numbers.tsv
"use strict";

// xorshift32: deterministic, so the corpus only changes with this script.
let state = 0x9e3779b9;
function rand() {
  state ^= state << 13;
  state >>>= 0;
  state ^= state >>> 17;
  state ^= state << 5;
  state >>>= 0;
  return state / 4294967296;
}
const int = (lo, hi) => lo + Math.floor(rand() * (hi - lo + 1));
const digits = (n) => {
  let s = String(int(1, 9));
  while (s.length < n) s += String(int(0, 9));
  return s;
};
const sign = () => (rand() < 0.3 ? "-" : "");

const texts = new Set();
const add = (t) => texts.add(t);

// Hand-picked shapes: zeros, the examples of issue 12, the ends of the
// double range, 2^53 neighbours, the plain/exponent notation boundaries.
[
  "0", "-0", "0.0", "-0.0", "0e5", "1", "-1", "0.1", "0.2", "0.3",
  "972936.7862878069", "214141055750606892333",
  "5e-324", "-5e-324", "2.2250738585072014e-308", "2.225073858507201e-308",
  "1.7976931348623157e308", "-1.7976931348623157e308", "4.9406564584124654e-324",
  "9007199254740991", "9007199254740992", "9007199254740993", "9007199254740995",
  "-9007199254740993", "18446744073709551615", "18446744073709551616",
  "-9223372036854775808", "-9223372036854775809", "9223372036854775807",
  "1e20", "1e21", "123456789012345678901", "999999999999999999999",
  "1e-6", "1e-7", "0.000001", "0.0000001", "1.5e-7", "100000000000000000000",
  "1E+2", "1e+2", "1.0", "12.50", "2.5e25", "0.1e1", "123e-2",
].forEach(add);

// Random decimals of 1 to 25 significant digits at every scale.
for (let i = 0; i < 1500; i++) {
  const d = digits(int(1, 25));
  const exp = int(-30, 30);
  add(`${sign()}${d}e${exp}`);
}

// 15 to 21 significant digits in plain notation, where a parse one ULP off
// shows (most of the 782 in 3,000 of issue 12).
for (let i = 0; i < 1500; i++) {
  const d = digits(int(15, 21));
  const point = int(0, d.length);
  const text = point === d.length ? d : `${d.slice(0, point) || "0"}.${d.slice(point)}`;
  add(sign() + text);
}

// Integers above 2^53 (and 2^64), exact in the text, rounded by the parse.
for (let i = 0; i < 400; i++) add(sign() + digits(int(16, 24)));

// Extremes of the exponent: tiny, subnormal, huge.
for (let i = 0; i < 300; i++) {
  const d = digits(int(1, 20));
  const exp = rand() < 0.5 ? int(-345, -290) : int(280, 308 - d.length);
  add(`${sign()}${d[0]}.${d.slice(1) || "0"}e${exp}`);
}

// The exact decimal of a double, as a BigInt numerator over 10^scale.
function exact(mant, exp) {
  if (exp >= 0) return { num: mant << BigInt(exp), scale: 0 };
  return { num: mant * 5n ** BigInt(-exp), scale: -exp };
}
function decimal({ num, scale }) {
  let s = num.toString();
  if (scale === 0) return s;
  s = s.padStart(scale + 1, "0");
  return `${s.slice(0, -scale)}.${s.slice(-scale)}`.replace(/0+$/, "").replace(/\.$/, "");
}

// Halfway cases: the exact midpoint of two neighbouring doubles (ties go to
// the even one), and texts just below and above it.
const view = new DataView(new ArrayBuffer(8));
for (let i = 0; i < 400; i++) {
  const x = (rand() + 0.5) * 10 ** int(-20, 25);
  view.setFloat64(0, x);
  const bits = view.getBigUint64(0);
  const biased = Number((bits >> 52n) & 0x7ffn);
  const mant = (bits & ((1n << 52n) - 1n)) | (1n << 52n);
  const exp = biased - 1075;
  // (2m + 1) * 2^(exp - 1): halfway to the next double up.
  const mid = decimal(exact(2n * mant + 1n, exp - 1));
  add(mid);
  add("-" + mid);
  // Cut to 17 to 20 digits: just below the midpoint; the next digit string up
  // is just above it.
  const sig = mid.replace(".", "").replace(/^0+/, "");
  const cut = int(17, 20);
  if (sig.length > cut) {
    const point = mid.indexOf(".");
    const intLen = point < 0 ? mid.length : point;
    const leadZeros = mid.replace(".", "").length - mid.replace(".", "").replace(/^0+/, "").length;
    const below = BigInt(sig.slice(0, cut));
    for (const n of [below, below + 1n]) {
      // Put the decimal point back: the value is 0.sig × 10^(intLen - leadZeros).
      add(`${n.toString()[0]}.${n.toString().slice(1)}e${intLen - leadZeros - 1}`);
    }
  }
}

for (const t of texts) {
  const v = JSON.parse(t);
  if (!Number.isFinite(v)) continue;
  process.stdout.write(`${t}\t${String(v)}\n`);
}

// Seeded test strings for the tokenizer comparison, one hex line each:
//   node strings.mjs SEED N > HEXLINES
// Kinds in turn: ShareGPT-like prose, code, emoji, CJK, whitespace runs,
// digits, added-token names inside text, mixed scripts, and invalid UTF-8.
const [seedArg, nArg] = process.argv.slice(2);
let s = BigInt(seedArg) ^ 0x9e3779b97f4a7c15n;
function rnd() { // splitmix64
  s = (s + 0x9e3779b97f4a7c15n) & 0xffffffffffffffffn;
  let z = s;
  z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & 0xffffffffffffffffn;
  z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & 0xffffffffffffffffn;
  return Number((z ^ (z >> 31n)) >> 11n) / 2 ** 53;
}
const int = (n) => Math.floor(rnd() * n);
const pick = (a) => a[int(a.length)];
const words = ("the of and to in is you that it he was for on are as with his they I at be this have " +
  "from or one had by word but not what all were we when your can said there use an each which she do " +
  "how their if will up other about out many then them these so some her would make like him into time " +
  "has look two more write go see number no way could people my than first water been call who oil its " +
  "now find long down day did get come made may part Hello World Python JavaScript model tokenizer " +
  "don't I'm we've they'll she'd it's can't won't isn't O'Neil résumé naïve café über Straße").split(" ");
const punct = [".", ",", "!", "?", ";", ":", " -", "...", "\"", "'", "(", ")", " —"];
function prose() {
  let out = [];
  for (let i = 0, n = 1 + int(40); i < n; i++) {
    let w = pick(words);
    if (rnd() < 0.1) w = w[0].toUpperCase() + w.slice(1);
    out.push(w + (rnd() < 0.15 ? pick(punct) : ""));
    if (rnd() < 0.03) out.push("\n\n");
  }
  return out.join(" ");
}
const code = [
  "def f(x):\n    return x * 2\n", "for (int i = 0; i < n; i++) {\n\tsum += a[i];\n}\n",
  "const x = {a: 1, b: [2, 3]};\n", "#include <stdio.h>\nint main(void) { return 0; }\n",
  "SELECT * FROM users WHERE id = 42;", "    if err != nil {\n        return err\n    }\n",
  "x = [i**2 for i in range(10) if i % 2 == 0]", "<div class=\"a\">&nbsp;</div>\r\n",
  "fn main() { println!(\"{}\", 1_000_000); }", "$ ls -la | grep '^d' && echo done",
];
const emoji = ["😀", "🎉", "👍🏽", "👨‍👩‍👧‍👦", "🇯🇵", "❤️", "🤖", "✨", "🔥", "🧪"];
const cjk = ["日本語", "中文测试", "한국어", "東京", "こんにちは", "谢谢", "漢字かな交じり文", "안녕하세요", "。", "、"];
const ws = [" ", "  ", "\t", "\n", "\r\n", "   \n", "\u00a0", "\u3000", "\u2009", "\n\n\n", "\t\t "];
const added = ["<|begin_of_text|>", "<|end_of_text|>", "<|eot_id|>", "<s>", "</s>", "<unk>", "<|im_start|>"];
const scripts = ["Привет мир", "مرحبا بالعالم", "שלום", "नमस्ते", "Γειά σου", "ไทย", "Tiếng Việt", "Ελληνικά"];
function mix(parts) { let o = ""; for (let i = 0, n = 1 + int(12); i < n; i++) o += pick(parts)(); return o; }
const gens = [
  () => prose(),
  () => pick(code) + (rnd() < 0.5 ? pick(code) : ""),
  () => mix([() => pick(emoji), () => " ", () => pick(words)]),
  () => mix([() => pick(cjk), () => pick(words) + " ", () => pick(emoji)]),
  () => mix([() => pick(ws).repeat(1 + int(8)), () => pick(words)]),
  () => mix([() => String(int(10 ** (1 + int(9)))), () => pick([" ", ".", ",", "-", "/"])]),
  () => mix([() => pick(added), () => " " + pick(words), () => pick(words)]),
  () => mix([() => pick(scripts), () => pick(ws), () => pick(punct)]),
];
const out = [];
const n = Number(nArg);
for (let i = 0; i < n; i++) {
  let b;
  if (i % 10 === 9) { // invalid UTF-8: stray, truncated and overlong sequences among text
    const bad = [[0x80], [0xff], [0xc3], [0xe6, 0x97], [0xf0, 0x9f, 0x98], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xf5, 0x80]];
    const parts = [];
    for (let k = 0, m = 1 + int(6); k < m; k++) {
      parts.push(Buffer.from(pick(gens)().slice(0, 40), "utf8"));
      parts.push(Buffer.from(pick(bad)));
    }
    b = Buffer.concat(parts);
  } else {
    b = Buffer.from(gens[i % gens.length](), "utf8");
  }
  out.push(b.toString("hex"));
}
process.stdout.write(out.join("\n") + "\n");

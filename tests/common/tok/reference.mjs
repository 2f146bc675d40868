// The reference side of the tokenizer comparison: @huggingface/tokenizers
// (pure JavaScript) encodes the same strings as rhobench's C tokenizer.
//   node reference.mjs encode TOKENIZER_JSON < HEXLINES > IDLINES
//   node reference.mjs bench TOKENIZER_JSON HEXLINES ROUNDS
// HEXLINES: each line a string's bytes in hex; the bytes are read as UTF-8
// with each ill-formed sequence replaced by U+FFFD (Buffer's decoder).
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

const require = createRequire(join(process.env.RB_NPM_DIR, "package.json"));
const mod = await import(require.resolve("@huggingface/tokenizers"));
const Tokenizer = mod.Tokenizer ?? mod.default.Tokenizer;
const [cmd, file, lines, rounds] = process.argv.slice(2);
const json = JSON.parse(readFileSync(file, "utf8"));
let config = {};
try {
  config = JSON.parse(readFileSync(join(dirname(file), "tokenizer_config.json"), "utf8"));
} catch {}
const tok = new Tokenizer(json, config);
const texts = (cmd === "bench" ? readFileSync(lines, "utf8") : readFileSync(0, "utf8"))
  .split("\n").slice(0, -1).map((h) => Buffer.from(h, "hex").toString("utf8"));
if (cmd === "encode") {
  const out = texts.map((t) => tok.encode(t, { add_special_tokens: false }).ids.join(" "));
  process.stdout.write(out.join("\n") + (out.length ? "\n" : ""));
} else if (cmd === "bench") {
  let total = 0, bytes = 0;
  const t0 = process.hrtime.bigint();
  for (let r = 0; r < Number(rounds); r++)
    for (const t of texts) {
      total += tok.encode(t, { add_special_tokens: false }).ids.length;
      bytes += Buffer.byteLength(t);
    }
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  console.log(JSON.stringify({ tokens: total, bytes, seconds: s, tokens_per_s: Math.round(total / s) }));
}

/* rb_tok: a tokenizer that reads Hugging Face's tokenizer.json, so loadgen
 * and simserver count and build prompts in a real model's tokens. The model
 * is BPE, in its two common forms:
 *   - byte-level BPE (GPT-2, Llama 3, Qwen 2): a pre-tokenizer regex
 *     (Split / ByteLevel, matched with PCRE2 in UTF and UCP mode), each
 *     piece's bytes mapped to GPT-2's printable characters, then merges;
 *   - SentencePiece-style BPE (Llama 2, Mistral): the Prepend/Replace
 *     normalizers or the Metaspace pre-tokenizer ("▁" for a space), merges
 *     over characters, and byte fallback (<0xXX>) for characters outside
 *     the vocabulary.
 * Added tokens are split out first (leftmost, longest), as the Rust library
 * does; with add_special the post-processor's special tokens are added
 * (TemplateProcessing's "single"), as a server counts a prompt. Text that is
 * not valid UTF-8 is read with each bad sequence replaced by U+FFFD (the
 * WHATWG decoder's rule, which Node.js and Python's "replace" apply).
 * Limits: the NFC normalizer is taken as the identity (exact for text
 * already in NFC, which nearly all text is); other normalizers, models
 * (WordPiece, Unigram) and pre-tokenizers are refused by name.
 * A tokenizer is not thread-safe (it keeps scratch space); one per process
 * or thread. Files are read whole, bounded by RB_TOK_MAX_FILE_BYTES. */
#ifndef RB_TOK_H
#define RB_TOK_H

#include <stddef.h>
#include <stdint.h>

#include "rb_buf.h"

#define RB_TOK_MAX_FILE_BYTES ((size_t)256 << 20)

typedef struct rb_tok rb_tok;

/* Reads a tokenizer.json from memory. 0, or -EINVAL (err names the key and
 * what was wrong) or -ENOMEM. */
int rb_tok_parse(const char *json, size_t len, rb_tok **out, char *err, size_t errlen);
/* NAME is a tokenizer.json file, a directory holding one, or a model id
 * ("org/name") found in the local Hugging Face cache: $HF_HUB_CACHE, else
 * $HF_HOME/hub, else ~/.cache/huggingface/hub, in the hub's layout
 * models--org--name/snapshots/REV/tokenizer.json (the revision refs/main
 * names first). Nothing is downloaded: a model id not in the cache is
 * -ENOENT with a message saying so. Writes the file's path into path. */
int rb_tok_resolve(const char *name, char *path, size_t cap, char *err, size_t errlen);
/* rb_tok_resolve, then the file read and parsed. */
int rb_tok_open(const char *name, rb_tok **out, char *err, size_t errlen);
void rb_tok_free(rb_tok *t);

typedef struct rb_tok_ids {
    int32_t *v;
    size_t n, cap;
} rb_tok_ids;
void rb_tok_ids_free(rb_tok_ids *ids);

/* Appends the ids of text[0..len) to out. add_special: the post-processor's
 * tokens too (a server's prompt count). 0 or -ENOMEM. */
int rb_tok_encode(rb_tok *t, const char *text, size_t len, int add_special, rb_tok_ids *out);
/* The number of tokens of text (no special tokens), or -1 on no memory. */
int64_t rb_tok_count(rb_tok *t, const char *text, size_t len);
/* Appends the text of ids (special tokens included) to out; an id out of
 * range is skipped. 0 or -ENOMEM. */
int rb_tok_decode(const rb_tok *t, const int32_t *ids, size_t n, rb_buf *out);

/* The tokens add_special adds (a BOS: 1 for Llama; 0 for GPT-2). */
int rb_tok_n_special_added(const rb_tok *t);
/* One past the largest id (vocabulary and added tokens). */
int32_t rb_tok_vocab_size(const rb_tok *t);
/* 1 if id is an added token marked special, or no token at all. */
int rb_tok_is_special(const rb_tok *t, int32_t id);
/* The ids that are neither special nor holes, ascending (n_normal of them):
 * what a random token-id prompt draws from. */
const int32_t *rb_tok_normal_ids(const rb_tok *t, size_t *n_normal);

/* Text made valid UTF-8: each ill-formed sequence becomes U+FFFD. */
int rb_utf8_sanitize(const char *s, size_t len, rb_buf *out);

#endif

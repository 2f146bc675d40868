/* lg_yaml: one YAML document (libyaml's parser) turned into the cJSON tree
 * the JSON config path consumes. Pure: bytes in, a tree out, no I/O.
 * The scalars resolve as PyYAML's safe_load resolves them (which is how
 * Inference Perf reads its configs): plain ~, null and the empty value are
 * null; true/false/yes/no/on/off (any of their three spellings: lower,
 * Capitalised, UPPER) are booleans; a plain scalar that reads whole as a
 * finite decimal number (or 0x hex) is a number; everything else, and every
 * quoted or block scalar, is a string. The tags !!str, !!int, !!float,
 * !!bool and !!null force a type; any other tag is an error. Mapping keys
 * are scalars, kept as their text, in document order (a key given twice is
 * kept twice, so the config reader can name it). Refused, with the line:
 * aliases (an anchor is allowed and ignored), more than one document,
 * nesting deeper than LG_YAML_MAX_DEPTH, a key that is not a scalar, and
 * anything libyaml itself refuses. An empty document (nothing, or comments
 * only) is an empty object, as Inference Perf reads it. */
#ifndef LG_YAML_H
#define LG_YAML_H

#include <cjson/cJSON.h>
#include <stddef.h>

#define LG_YAML_MAX_DEPTH 64

/* The tree (the caller cJSON_Delete()s it), or NULL with err set to
 * "line N: WHAT" (N from 1). */
cJSON *lg_yaml_parse(const char *text, size_t len, char *err, size_t errlen);

/* Whether text looks like JSON rather than YAML: its first byte that is not
 * white space (or a UTF-8 byte-order mark) is '{' or '['. */
int lg_yaml_looks_like_json(const char *text, size_t len);

#endif

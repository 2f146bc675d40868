/* rb_json: the suite's one set of small cJSON getters and putters, so that a
 * number that is absent, null or not a number reads the same way in every
 * program, and a figure that is not finite is written the same way. JSON
 * has no NaN and no infinity; the one policy: a figure that is not there
 * (NaN, or infinite where infinity is no meaning: a fit, a ratio) is null
 * (rb_json_put_num); an unbounded value of the result JSON (an infinite
 * request rate: all requests at once) is the string "inf" ("-inf"), as
 * vLLM's bench writes it, so that its readers tell it from "not measured"
 * (rb_json_put_num_inf). Readers that want a number read either as one
 * that is not (rb_json_num: NAN; jq: not of type "number"). Pure; o may be
 * NULL (an absent parent object). */
#ifndef RB_JSON_H
#define RB_JSON_H

#include <stddef.h>

#include <cjson/cJSON.h>

/* o[key] as a number, or NAN when absent or not a number. */
double rb_json_num(const cJSON *o, const char *key);
/* o[key] into *out: 0, or -1 (out untouched) when absent or not a number. */
int rb_json_get_num(const cJSON *o, const char *key, double *out);
/* o[key] as a string into dst[0..n), or "" when absent or not a string. */
void rb_json_str(const cJSON *o, const char *key, char *dst, size_t n);
/* o[key] as a two-number array (an interval); NAN where absent. */
void rb_json_pair(const cJSON *o, const char *key, double v[2]);

/* Adds key: v, or key: null when v is not finite. */
void rb_json_put_num(cJSON *o, const char *key, double v);
/* Adds key: v; key: "inf" or "-inf" when v is infinite; key: null when NaN. */
void rb_json_put_num_inf(cJSON *o, const char *key, double v);
/* Adds key: [v0, v1], each null when not finite. */
void rb_json_put_pair(cJSON *o, const char *key, const double v[2]);
/* Adds key: s, or key: null when s is NULL or empty. */
void rb_json_put_str(cJSON *o, const char *key, const char *s);
/* Adds key: a deep copy of src[key], when src has it (else nothing). */
void rb_json_copy(cJSON *dst, const cJSON *src, const char *key);

#endif

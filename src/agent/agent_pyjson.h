/*
 * agent_pyjson.h - JSON text as Python's json.dumps writes it, for the agent
 * CLI (XProf's commands print json.dumps(..., indent=2) of Python values).
 *
 * Values are cJSON trees. Python tells an int from a float and cJSON does
 * not, so a float is a cJSON raw item holding Python's repr of it
 * (pyj_float); a cJSON number prints as an integer.
 */
#ifndef XPROFS_AGENT_PYJSON_H
#define XPROFS_AGENT_PYJSON_H

#include <stddef.h>

#include <cjson/cJSON.h>

/* Python's repr of a float (shortest round trip: 1.0, 1e-05, 1.5e+16,
 * NaN and Infinity as json.dumps spells them) into buf (32 bytes). */
void py_float_repr(double v, char *buf, size_t n);

/* Python's repr of a str (quotes chosen as Python chooses them). */
void py_str_repr(const char *s, char *buf, size_t n);

/* Python's round(v, ndigits). */
double py_round(double v, int ndigits);

/* A float item (raw: its repr), or NULL when out of memory. */
cJSON *pyj_float(double v);

/* Add a float / an integer / a string / a bool to object obj under key;
 * 0 or -ENOMEM. */
int pyj_add_float(cJSON *obj, const char *key, double v);
int pyj_add_int(cJSON *obj, const char *key, double v);
int pyj_add_str(cJSON *obj, const char *key, const char *s);
int pyj_add_bool(cJSON *obj, const char *key, int b);

/* Set key in obj as Python's dict assignment does: replace the value in
 * place when the key is there (its position is kept), else append. Takes
 * ownership of item. 0 or -ENOMEM. */
int pyj_set(cJSON *obj, const char *key, cJSON *item);

/* json.dumps(v, indent=2) (indent >= 0) or json.dumps(v) (indent < 0):
 * a malloc'd NUL-terminated string, or NULL when out of memory. Non-ASCII
 * characters are written as \uXXXX escapes (ensure_ascii). */
char *pyj_dumps(const cJSON *v, int indent);

#endif

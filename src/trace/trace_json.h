/*
 * trace_json.h - the number and string spellings of XProf's trace JSON.
 *
 * The streaming trace viewer (trace_events_to_json.cc) writes timestamps as
 * C "%.17g" of picoseconds / 1e6, the full time span through abseil's
 * six-digit StrCat, and strings through its own JsonEscape (which also
 * escapes < > & and U+2028/2029). The legacy viewer goes through Python's
 * json.dumps (float repr, ensure_ascii). Stack-frame ids depend on
 * libstdc++'s std::hash of a string. All of these are reproduced here, byte
 * for byte, and written through a struct out.
 */
#ifndef XPROFS_TRACE_JSON_H
#define XPROFS_TRACE_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "out/out.h"

/* s[0..n) as XProf's JsonEscape writes it, quotes included. */
void tj_str(struct out *o, const char *s, size_t n);

/* Same for a NUL-terminated string. */
void tj_cstr(struct out *o, const char *s);

/* ps / 1e6 (microseconds) formatted as C "%.17g". Exact and fast for the
 * common range; falls back to snprintf elsewhere. */
void tj_us(struct out *o, uint64_t ps);

/* A double as C "%.17g" (finite values only). */
void tj_g17(struct out *o, double v);

/* A double as abseil's StrCat(double): six significant digits, %g style. */
void tj_g6(struct out *o, double v);

/* A double as Python's repr() (shortest round-trip, Python's layout). */
void tj_py_float(struct out *o, double v);

/* ps / 1e6 as Python's repr() of the float timestamp_ps / 1000000.0. */
void tj_py_us(struct out *o, uint64_t ps);

/* s[0..n) as Python's json.dumps writes a str (ensure_ascii: non-ASCII as
 * \uXXXX, surrogate pairs above U+FFFF; invalid UTF-8 bytes as U+FFFD). */
void tj_py_str(struct out *o, const char *s, size_t n);

/* One "name":value member of an args object, as XProf's WriteArg writes
 * it: integers above 2^53 in magnitude quoted, doubles "%.17g" ("%.2f" for
 * names ending in "(util %)" or " (MB/sec)"), non-finite ones as strings. */
void tj_arg_str(struct out *o, const char *name, const char *value, size_t n);
void tj_arg_i64(struct out *o, const char *name, int64_t v);
void tj_arg_u64(struct out *o, const char *name, uint64_t v);
void tj_arg_double(struct out *o, const char *name, double v);

/* A finite double value alone, with the same rule. */
void tj_double_value(struct out *o, const char *name, double v);

/* The name of flow category cat (tsl's GetContextTypeString): "" for the
 * generic and legacy types and for numbers past the last type. */
const char *tj_context_name(unsigned cat);

/* 1 if name ends in "(util %)" or " (MB/sec)". */
int tj_perf_counter_name(const char *name);

#endif

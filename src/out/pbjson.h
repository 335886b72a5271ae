/*
 * pbjson.h - values as protobuf's JSON printer (MessageToJsonString,
 * json/internal/writer.cc) spells them: strings with its escapes (short
 * ones for the usual controls, \u for the rest, for < and > and for the
 * invisible scalars, a space for a malformed UTF-8 scalar), doubles as
 * SimpleDtoa prints them, 64-bit integers quoted. The tools that answer
 * with a protobuf message's JSON (op_profile, memory_viewer) write it
 * field by field with these.
 */
#ifndef XPROFS_PBJSON_H
#define XPROFS_PBJSON_H

#include <stddef.h>
#include <stdint.h>

#include "out.h"

/* s[0..n) as a JSON string. */
void pbjson_str(struct out *o, const char *s, size_t n);
/* %.15g when that reads back, else %.17g; NaN and infinities as strings. */
void pbjson_double(struct out *o, double v);
/* A quoted uint64 / int64. */
void pbjson_u64(struct out *o, uint64_t v);
void pbjson_i64(struct out *o, int64_t v);

#endif

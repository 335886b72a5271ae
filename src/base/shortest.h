/*
 * shortest.h - the fewest decimal digits that read back as a double: what
 * Python's repr and nlohmann's dump print (datatable.c, trace_json.c lay
 * them out).
 */
#ifndef XPROFS_SHORTEST_H
#define XPROFS_SHORTEST_H

/* For finite v != 0: its shortest round-trip significant digits (no sign,
 * no dot, no trailing zeros, NUL-terminated; digits holds 18 bytes) and the
 * power of ten of the first one (v = d.ddd x 10^*exp10). Returns the
 * number of digits (1..17). */
int shortest_digits(double v, char *digits, int *exp10);

/* The same answer found by printf at each number of digits (by halves):
 * shortest_digits falls back on it where rounding its 17 digits could be
 * wrong, and tests compare the two. */
int shortest_digits_by_search(double v, char *digits, int *exp10);

#endif

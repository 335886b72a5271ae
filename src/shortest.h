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

#endif

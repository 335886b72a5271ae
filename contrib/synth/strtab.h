/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Name table of one plane kind: interns names and gives each a metadata id
 * (1, 2, 3, ... in first-seen order). Serializes as the XPlane
 * event_metadata or stat_metadata map.
 */
#ifndef SYNTH_STRTAB_H
#define SYNTH_STRTAB_H

#include <stddef.h>
#include <stdint.h>

#include "pool.h"
#include "wire.h"

/*
 * Invariant: names[i] has id i + 1; slots is an open-addressing hash of ids
 * (0 = empty) with n_slots a power of two larger than twice n_names.
 */
struct strtab {
    struct pool strings; /* copies of the names */
    const char **names;  /* names by id - 1 */
    size_t n_names;      /* names interned */
    size_t cap_names;    /* allocated entries of names */
    uint32_t *slots;     /* hash slots holding ids */
    size_t n_slots;      /* power of two */
    int failed;          /* an allocation failed (sticky) */
};

#define STRTAB_INIT                                                                                \
    {                                                                                              \
        POOL_INIT, NULL, 0, 0, NULL, 0, 0                                                          \
    }

/* Returns the id of name, adding it if new; 0 if out of memory (sticky). */
int64_t strtab_id(struct strtab *t, const char *name);

/* Returns 0, or -ENOMEM if any strtab_id() call failed. */
int strtab_ok(const struct strtab *t);

/* Name of id (1-based), or "" when out of range. */
const char *strtab_name(const struct strtab *t, int64_t id);

/* Appends the table as XPlane.stat_metadata map entries (field 5). */
void strtab_write_stat_metadata(const struct strtab *t, struct wbuf *out);

/* Appends the table as XPlane.event_metadata map entries (field 4). */
void strtab_write_event_metadata(const struct strtab *t, struct wbuf *out);

/* Frees everything; the table is empty afterwards. */
void strtab_release(struct strtab *t);

#endif

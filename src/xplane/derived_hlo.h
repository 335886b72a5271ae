/*
 * derived_hlo.h - what XProf's symbol resolver finds for an XLA op on a GPU
 * (GenerateDerivedTimeLines in xprof/utils/derived_timeline.cc).
 *
 * For a kernel's (program id, last hlo_op name), XProf looks the instruction
 * up in the HLO modules of /host:metadata and takes its framework op name,
 * op_name ":" op_type (TraceMeOp, so ":" when the metadata is empty), and its
 * source, basename(source_file) ":" source_line (none without a file). From
 * the host's parsed modules (hlo_module.h) we keep, per instruction, everything
 * the derived lines need already parsed: the framework op's display name
 * (TfOpEventName) and its name scopes (ParseTfNameScopes, for TensorFlow and
 * JAX ops). Equal strings are stored once, so equal names have equal
 * pointers.
 */
#ifndef XPROFS_DERIVED_HLO_H
#define XPROFS_DERIVED_HLO_H

#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/err.h"
#include "base/intern.h"
#include "hlo/hlo_module.h"

struct dh_instr {
    const char *name;     /* instruction name */
    size_t name_len;      /* its length */
    const char *tf_op;    /* framework op full name (never NULL) */
    const char *tf_shown; /* its display name, or NULL when that is empty */
    const char *source;   /* "file.py:12", or NULL */
    const char **scopes;  /* name scopes, outermost first */
    uint32_t nscopes;     /* entries in scopes */
};

struct dh_module {
    uint64_t program_id;     /* key */
    struct dh_instr *instrs; /* sorted by name, first of a name kept first */
    uint32_t ninstrs;        /* entries */
    uint32_t *index;         /* name hash -> 1 + first instruction of that name, or 0 */
    uint32_t index_cap;      /* entries in index (a power of two) */
};

struct derived_hlo {
    struct arena arena;     /* every string and array */
    struct dh_module *mods; /* sorted by program id */
    uint32_t nmods;         /* entries */
    struct intern strings;  /* names, stored once each */
};

/* The map of a host's HLO modules (the first module of a program id wins;
 * corrupt protos were already dropped, as XProf drops modules it cannot
 * convert). Returns 0 and *hp, or -ENOMEM with err. */
int derived_hlo_build(const struct hlo_modules *mods, struct derived_hlo **hp, struct xp_err *err);

void derived_hlo_free(struct derived_hlo *h);

/* The instruction name[0..n) of program_id, or NULL. */
const struct dh_instr *derived_hlo_find(const struct derived_hlo *h, uint64_t program_id,
                                        const char *name, size_t n);

/* The display name XProf gives a framework op full name s[0..n)
 * (TfOpEventName of ParseTfOpFullname) as a view into s of *len bytes;
 * *iterator_prefix is set when the name is "Iterator::" and then the view. */
const char *derived_tf_op_shown(const char *s, size_t n, size_t *len, int *iterator_prefix);

/* Name scopes of s[0..n) (ParseTfNameScopes on the parsed op name) for
 * TensorFlow and JAX ops: calls fn(ctx, scope, len) for each, outermost
 * first; stops and returns fn's first non-zero result. 0 when none. */
int derived_tf_op_scopes(const char *s, size_t n, int (*fn)(void *, const char *, size_t),
                         void *ctx);

#endif

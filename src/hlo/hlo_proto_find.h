/*
 * hlo_proto_find.h - the xla.HloProto bytes of one HLO module of a run, as
 * XProf's HLO tools find them (xprof/convert/xplane_to_hlo.cc): by module
 * name `name(program_id)`, or by the first module name containing a program
 * id. The run's `<module>.hlo_proto.pb` files come first (XProf reads only
 * those once they exist), then the `Hlo Proto` stats of the hosts'
 * /host:metadata planes, where a module is named both as XProf names it
 * (HloModuleProto.name plus the program id) and as module_list.json lists it
 * (the event metadata name plus the program id); the first of a name wins.
 *
 * Nothing is decoded but the few bytes that name a module; the bytes found
 * are the profile's own (mapped) or one file read into memory.
 */
#ifndef XPROFS_HLO_PROTO_FIND_H
#define XPROFS_HLO_PROTO_FIND_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

struct snapshot;

struct hlo_proto_bytes {
    const uint8_t *p; /* the HloProto */
    size_t n;         /* its length */
    uint8_t *owned;   /* the file's bytes when read from one (big_free), or NULL */
    char name[512];   /* the module's name as asked for or matched */
};

/* Find the module named module_name (when not NULL or empty), else the first
 * whose name contains program_id, among the run's files and the metadata of
 * hosts[0..nhosts). Returns 0 with *b filled (release with
 * hlo_proto_bytes_release; the bytes live as long as the snapshot or b),
 * -ENOENT when no module matches, -EINVAL when neither is given, or another
 * negative errno from opening a profile, with err. */
int hlo_proto_find(struct snapshot *snap, const char *const *hosts, int nhosts,
                   const char *module_name, const char *program_id, struct hlo_proto_bytes *b,
                   struct xp_err *err);

/* Release what b owns; a zeroed b is fine. */
void hlo_proto_bytes_release(struct hlo_proto_bytes *b);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Hand-encoded xla.HloProto of a synthetic module: the bytes of the
 * "Hlo Proto" stat of the /host:metadata plane.
 */
#ifndef SYNTH_HLO_H
#define SYNTH_HLO_H

#include "program.h"
#include "wire.h"

/*
 * Appends the serialized HloProto of module m to out: an entry computation
 * holding parameters, every op of m (fusions call their own fused
 * computation) and a root tuple. Returns 0 or -ENOMEM.
 */
int hlo_encode(const struct module *m, struct wbuf *out);

#endif

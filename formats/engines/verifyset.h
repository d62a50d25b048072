/* formats/engines/verifyset.h: verify's iteration over the q/k pairs of a multi-layer dump, the
 * counterpart of applyset.h: for each pair of DUMPS, the member specs verify reads (its q and k,
 * and the same group's pair of the --expect-q container) and the layer type whose parameters
 * rotate it. No printing; errors through posenc_error. */
#ifndef PE_VERIFYSET_H
#define PE_VERIFYSET_H

#include <stddef.h>

#include "formats/engines/pairs.h"
#include "posenc/config.h"
#include "posenc/io.h"

typedef struct pe_vset pe_vset;

/* One pair's run: spec[0..1] = "QPATH:Q", "QPATH:K"; spec[2..3] the expect container's pair of
 * the same group, or NULL without --expect-q. layer_type: the pair's own (pe_pairs_layers), or
 * for a NoPE layer of a model with several layer types the first one (only head_dim matters).
 * Borrowed from the set until the next pe_vset_item or pe_vset_free. */
typedef struct {
    const pe_pair *pair;
    const char *spec[4];
    const char *layer_type;
} pe_vset_item;

/* A set over pq (pairs of container cq at qpath) and, when pe is not NULL, their expected pairs
 * (container ce at epath). All borrowed: they outlive the set. */
posenc_status pe_vset_new(const posenc_model *m, const posenc_container *cq, const pe_pairs *pq,
                          const char *qpath, const posenc_container *ce, const pe_pairs *pe,
                          const char *epath, pe_vset **out, posenc_error *err);
/* Pair i (< pq->n). POSENC_ENOTFOUND naming epath, the group and qpath when the expect
 * container has no pair of that group. */
posenc_status pe_vset_item_at(pe_vset *s, size_t i, pe_vset_item *it, posenc_error *err);
void pe_vset_free(pe_vset *s);

#endif

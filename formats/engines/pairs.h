/* formats/engines/pairs.h: the q/k pairs of a multi-layer dump, for apply and verify.
 *
 * A runtime that dumps every layer into one file names its members /layer0/q, /layer0/k,
 * /layer1/q ... (HDF5) or layers.0.q, layers.0.k ... (safetensors, NPZ). A member is a query
 * or a key when its last path component (after '/', '.', '_' or '-') is one of a row of the
 * naming table in pairs.c (q/k, query/key, q_proj/k_proj, query_states/key_states); the rest of
 * its name is its group, and a query pairs with the key of the same row and group. A layer
 * index in the group (layer0, layers.12, h.3, blk.7, or a group that is one number) selects the
 * layer's RoPE parameters through the config's layer_types.
 *
 * Internal (pe_ prefix): the commands print the messages. */
#ifndef PE_PAIRS_H
#define PE_PAIRS_H

#include <stddef.h>
#include <stdint.h>

#include "posenc/error.h"
#include "posenc/io.h"
#include "posenc/model.h"

/* Most pairs one container may hold. */
#define PE_PAIRS_MAX 65536

typedef struct pe_pair {
    char group[POSENC_NAME_MAX];  /* the members' common path without the q/k component:
                                     "/layer0", "layers.0", "" for top-level q and k */
    size_t q, k;                  /* indices of the two members in the container */
    int64_t layer;                /* the layer index the group names, -1 when none */
    /* set by pe_pairs_layers: */
    const char *layer_type;       /* RoPE parameters of this layer type (borrowed from the
                                     model); NULL: the model's only set */
    int nope;                     /* the layer carries no RoPE */
    const char *layer_name;       /* the layer's entry in the config's layer_types (borrowed
                                     from the model), with or without RoPE and whatever
                                     --layer-type says; NULL: no index, or no entry for it */
} pe_pair;

typedef struct pe_pairs {
    size_t n;
    pe_pair *v;                   /* by layer index, then by group */
    size_t n_other;               /* members that are in no pair (values, masks ...) */
    char other[POSENC_NAME_MAX];  /* the first of them */
} pe_pairs;

/* The role of member name: 1 query, 2 key, 0 neither. *prefix_len (may be NULL) gets the
 * length of the name before the role component (the separator included), *row (may be NULL)
 * the naming-table row. */
int pe_pairs_role(const char *name, size_t *prefix_len, int *row);

/* The layer index a group names (see above), -1 when it names none or several, or the number
 * exceeds 2^31 - 1. */
int64_t pe_pairs_layer_index(const char *group);

/* A group as it reads in messages and reports: the group, or "(top level)" for "". */
const char *pe_pairs_label(const pe_pair *p);

/* 1 when groups a and b are the same, a leading '/' (HDF5) aside. */
int pe_pairs_same_group(const char *a, const char *b);

/* Pair up n member names (names[i] is member i). glob (NULL: every pair) keeps the pairs whose
 * group matches it (fnmatch(3): *, ?, [...]; with or without an HDF5 group's leading '/'). Errors
 * name `path`: a query or key without its partner (POSENC_EFORMAT, naming the missing member),
 * a group with two pairs (EFORMAT), no pair at all (ENOTFOUND), no pair matching glob
 * (POSENC_EINVAL, listing the groups). Caller frees *out with pe_pairs_free. */
posenc_status pe_pairs_find_names(const char *const *names, size_t n, const char *glob,
                                  const char *path, pe_pairs **out, posenc_error *err);
/* The same over the members of an open container. */
posenc_status pe_pairs_find(const posenc_container *c, const char *path, const char *glob,
                            pe_pairs **out, posenc_error *err);

/* A file holding the runtime's dumps before and after RoPE side by side (a capture program's
 * one output): every pair's group starts with "pre" or "rope" (pre.layers.0.q and
 * rope.layers.0.q; /pre/layer0/q and /rope/layer0/q in HDF5), and both occur. Keeps the pairs of
 * side (1 pre, 2 rope), their groups without that component, and returns 1; returns 0 and
 * leaves p as it is when p is no such file. */
int pe_pairs_take_side(pe_pairs *p, int side);

/* The container a dump argument names when a run is to take every pair in it: spec names a
 * file or directory without a member ("-" never does) holding several arrays, or any number of
 * them when glob or must is set. *out = that open container (caller closes it), or NULL when spec
 * is one array (the single-dump path, which reports what is wrong with it). An error only when
 * must is set and the container cannot be opened. */
posenc_status pe_pairs_open(const char *spec, const char *glob, int must,
                            const posenc_read_opts *ro, char *path, size_t plen,
                            posenc_container **out, posenc_error *err);

/* The pair of group in p (pe_pairs_same_group), NULL when there is none. Borrowed. */
const pe_pair *pe_pairs_get(const pe_pairs *p, const char *group);

/* Give every pair its RoPE parameters from the model: layer_type (--layer-type) when set, for
 * every pair; else, when the model has several layer types or NoPE layers, the layer type and
 * NoPE flag of the pair's layer index (posenc_model_layer). Every pair with a layer index the
 * config describes also gets its layer_name (Qwen3.5's linear_attention and full_attention,
 * which share one parameter set, included). A pair without a layer index, on a
 * layer the config does not describe, is refused (POSENC_EINVAL naming path and the group);
 * models with one parameter set and no NoPE layers need no index, and neither does a top-level
 * pair (group ""): it is one Q/K pair, rotated with layer_type (NULL: the only set) as the two
 * members named one by one would be. */
posenc_status pe_pairs_layers(pe_pairs *p, const posenc_model *m, const char *layer_type,
                              const char *path, posenc_error *err);

void pe_pairs_free(pe_pairs *p);

#endif

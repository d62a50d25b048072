/* formats/engines/verifyset.c: the pairs of a multi-layer dump as verify runs them (verifyset.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/engines/verifyset.h"

struct pe_vset {
    const posenc_model *m;
    const posenc_container *cq, *ce;
    const pe_pairs *pq, *pe;
    const char *qpath, *epath;
    size_t len;
    char *spec[4];
};

void pe_vset_free(pe_vset *s)
{
    if (!s)
        return;
    for (int i = 0; i < 4; i++)
        free(s->spec[i]);
    free(s);
}

posenc_status pe_vset_new(const posenc_model *m, const posenc_container *cq, const pe_pairs *pq,
                          const char *qpath, const posenc_container *ce, const pe_pairs *pe,
                          const char *epath, pe_vset **out, posenc_error *err)
{
    *out = NULL;
    pe_vset *s = calloc(1, sizeof *s);
    if (!s)
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    *s = (pe_vset){ m, cq, pe ? ce : NULL, pq, pe, qpath, pe ? epath : NULL, 0, { 0 } };
    s->len = strlen(qpath) + (pe ? strlen(epath) : 0) + POSENC_NAME_MAX + 8;
    for (int i = 0; i < 4; i++)
        if (!(s->spec[i] = malloc(s->len))) {
            pe_vset_free(s);
            return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
        }
    *out = s;
    return POSENC_OK;
}

posenc_status pe_vset_item_at(pe_vset *s, size_t i, pe_vset_item *it, posenc_error *err)
{
    const pe_pair *pr = &s->pq->v[i];
    const pe_pair *er = s->pe ? pe_pairs_get(s->pe, pr->group) : NULL;
    memset(it, 0, sizeof *it);
    if (s->pe && !er)
        return posenc_seterr(err, POSENC_ENOTFOUND, "'%s': no q/k pair for group '%s' of '%s'",
                             s->epath, pe_pairs_label(pr), s->qpath);
    snprintf(s->spec[0], s->len, "%s:%s", s->qpath, posenc_container_array(s->cq, pr->q)->name);
    snprintf(s->spec[1], s->len, "%s:%s", s->qpath, posenc_container_array(s->cq, pr->k)->name);
    if (er) {
        snprintf(s->spec[2], s->len, "%s:%s", s->epath,
                 posenc_container_array(s->ce, er->q)->name);
        snprintf(s->spec[3], s->len, "%s:%s", s->epath,
                 posenc_container_array(s->ce, er->k)->name);
    }
    it->pair = pr;
    for (int r = 0; r < 4; r++)
        it->spec[r] = r < 2 || er ? s->spec[r] : NULL;
    it->layer_type = pr->layer_type;
    if (pr->nope && !it->layer_type && posenc_model_layer_type_count(s->m) > 1)
        it->layer_type = posenc_model_layer_type_name(s->m, 0); /* only head_dim matters */
    return POSENC_OK;
}

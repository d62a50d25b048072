/* formats/report/info_out.c: posenc info --models and --runtimes as JSON or text (info_out.h). */
#include <inttypes.h>
#include <stdio.h>

#include "formats/report/info_out.h"
#include "posenc/llamacpp.h"
#include "posenc/vllm.h"

/* posenc info --models: the registry (lib/model/families.def), a row per model_type. */
int pe_info_models(cJSON *arr, pe_strbuf *b)
{
    size_t n = posenc_family_count();
    if (!arr)
        pe_strbuf_printf(b, "%-24s %-10s %-17s %-22s %s\n", "model_type", "encoding",
                         "pairing", "llama.cpp", "notes [source]");
    for (size_t i = 0; i < n; i++) {
        posenc_family_info fi;
        if (posenc_family_get(i, &fi, NULL) != POSENC_OK)
            break;
        if (arr) {
            cJSON *r = cJSON_CreateObject();
            if (!r || !cJSON_AddItemToArray(arr, r)) {
                cJSON_Delete(r);
                return -1;
            }
            cJSON_AddStringToObject(r, "model_type", fi.name);
            cJSON_AddStringToObject(r, "encoding", fi.encoding);
            cJSON_AddStringToObject(r, "pairing", fi.pairing);
            if (*fi.alias_of)
                cJSON_AddStringToObject(r, "alias_of", fi.alias_of);
            if (*fi.text)
                cJSON_AddStringToObject(r, "text_model_type", fi.text);
            cJSON_AddStringToObject(r, "notes", fi.notes);
            cJSON_AddStringToObject(r, "source", fi.source);
            if (*fi.gguf_arch) {
                cJSON *l = cJSON_AddObjectToObject(r, "llama_cpp");
                cJSON_AddStringToObject(l, "architecture", fi.gguf_arch);
                cJSON_AddBoolToObject(l, "rules", fi.llama_rules);
            } else {
                cJSON_AddNullToObject(r, "llama_cpp");
            }
        } else {
            char enc[40];
            snprintf(enc, sizeof enc, "%s%s%s", fi.encoding, *fi.text ? ":" : "", fi.text);
            /* the llama.cpp architecture, and "(no rules)" where posenc has not read them */
            char ll[64];
            snprintf(ll, sizeof ll, "%s%s", *fi.gguf_arch ? fi.gguf_arch : "-",
                     *fi.gguf_arch && !fi.llama_rules ? " (no rules)" : "");
            pe_strbuf_printf(b, "%-24s %-10s %-17s %-22s %s%s%s [%s]\n", fi.name, enc,
                    *fi.pairing ? fi.pairing : "-", ll, *fi.alias_of ? "as " : "", fi.alias_of,
                    *fi.alias_of ? "" : fi.notes, fi.source);
        }
    }
    return b->oom ? -1 : 0;
}

/* ---- --runtimes: the table of differences in definition, and each precision's drift ---- */

static const int64_t DRIFT_LEN[] = { 4096, 131072, 1048576 };
#define N_DRIFT (sizeof DRIFT_LEN / sizeof DRIFT_LEN[0])

int pe_info_runtimes(const posenc_model *m, const posenc_rope_config *cfg, const char *layer_type,
                     const char *config, int64_t max_model_len, cJSON *j, pe_strbuf *b)
{
    posenc_error err = { 0 };
    cJSON *rows = NULL;
    if (j && !(rows = cJSON_AddArrayToObject(j, "runtimes")))
        return -1;
    const char *fam = m ? posenc_model_family(m) : NULL;
    if (j)
        cJSON_AddStringToObject(j, "vllm_commits", posenc_vllm_commits());
    else
        pe_strbuf_printf(b, "vllm: %s\n", posenc_vllm_commits());
    for (size_t i = 0; i < posenc_runtime_diff_count(); i++) {
        posenc_runtime_diff d;
        if (posenc_runtime_diff_get(i, &d, &err) != POSENC_OK)
            break;
        if (!posenc_runtime_diff_applies(i, cfg, fam)) /* only the rows for this config */
            continue;
        if (j) {
            cJSON *r = cJSON_CreateObject();
            cJSON_AddStringToObject(r, "topic", d.topic);
            cJSON_AddStringToObject(r, "transformers", d.transformers);
            cJSON_AddStringToObject(r, "vllm", d.vllm);
            cJSON_AddStringToObject(r, "llamacpp", d.llamacpp);
            if (!r || !cJSON_AddItemToArray(rows, r)) {
                cJSON_Delete(r);
                return -1;
            }
        } else {
            pe_strbuf_printf(b, "%s\n  %-13s%s\n  %-13s%s\n  %-13s%s\n", d.topic, "transformers",
                    d.transformers, "vllm", d.vllm, "llama.cpp", d.llamacpp);
        }
    }
    if (m && cfg) {
        static const posenc_precision profs[] = { POSENC_PREC_HF, POSENC_PREC_VLLM };
        cJSON *dj = j ? cJSON_AddObjectToObject(j, "drift") : NULL;
        if (j) {
            cJSON_AddStringToObject(dj, "config", config);
            cJSON *pl = cJSON_AddArrayToObject(dj, "positions");
            for (size_t k = 0; k < N_DRIFT; k++)
                cJSON_AddItemToArray(pl, cJSON_CreateNumber((double)(DRIFT_LEN[k] - 1)));
        } else {
            pe_strbuf_printf(b, "drift (max |cos, sin error|) from exact math, and from "
                             "transformers' definition (vs hf), at positions");
            for (size_t k = 0; k < N_DRIFT; k++)
                pe_strbuf_printf(b, " %" PRId64, DRIFT_LEN[k] - 1);
            pe_strbuf_puts(b, "\n");
        }
        for (size_t q = 0; q < 2 * sizeof profs / sizeof profs[0]; q++) {
            size_t p = q / 2;
            int vs_hf = (int)(q % 2);
            if (vs_hf && profs[p] == POSENC_PREC_HF)
                continue; /* hf against its own definition is the line above */
            char key[32];
            snprintf(key, sizeof key, "%s%s", posenc_precision_name(profs[p]),
                     vs_hf ? "_vs_hf" : "");
            cJSON *arr = j ? cJSON_AddArrayToObject(dj, key) : NULL;
            if (!j)
                pe_strbuf_printf(b, "  %-13s", vs_hf ? "  vs hf" : posenc_precision_name(profs[p]));
            for (size_t k = 0; k < N_DRIFT; k++) {
                double dr = 0.0;
                posenc_status st =
                    (vs_hf ? posenc_rope_gap : posenc_rope_drift)(cfg, fam, profs[p],
                                                                  max_model_len,
                                                                  DRIFT_LEN[k] - 1, &dr, &err);
                const char *why = st == POSENC_ERANGE ? "past the cache"
                                  : st == POSENC_EUNSUPPORTED ? "not reproduced"
                                                              : "error";
                if (j)
                    cJSON_AddItemToArray(arr, st == POSENC_OK ? cJSON_CreateNumber(dr)
                                                              : cJSON_CreateString(why));
                else if (st == POSENC_OK)
                    pe_strbuf_printf(b, " %-10.3g", dr);
                else
                    pe_strbuf_printf(b, " %-10s", why);
            }
            if (!j)
                pe_strbuf_puts(b, "\n");
        }
        /* llama.cpp: the ggml precision, from the converter's keys for the config */
        char gwhy[POSENC_ERRMSG_MAX] = "";
        for (int vs_hf = 0; vs_hf < 2; vs_hf++) {
        cJSON *ga = j ? cJSON_AddArrayToObject(dj, vs_hf ? "ggml_vs_hf" : "ggml") : NULL;
        if (!j)
            pe_strbuf_printf(b, "  %-13s", vs_hf ? "  vs hf" : "ggml");
        for (size_t k = 0; k < N_DRIFT; k++) {
            double dr = 0.0;
            posenc_error ge = { 0 };
            posenc_status st = (vs_hf ? posenc_ggml_rope_gap : posenc_ggml_rope_drift)(
                m, layer_type, DRIFT_LEN[k] - 1, &dr, &ge);
            if (st != POSENC_OK && !gwhy[0])
                snprintf(gwhy, sizeof gwhy, "%s", ge.msg);
            if (j)
                cJSON_AddItemToArray(ga, st == POSENC_OK ? cJSON_CreateNumber(dr)
                                                         : cJSON_CreateString("not reproduced"));
            else if (st == POSENC_OK)
                pe_strbuf_printf(b, " %-10.3g", dr);
            else
                pe_strbuf_printf(b, " %-10s", "not reproduced");
        }
        if (!j)
            pe_strbuf_puts(b, "\n");
        }
        if (j) {
            if (gwhy[0])
                cJSON_AddStringToObject(dj, "ggml_note", gwhy);
        } else {
            if (gwhy[0])
                pe_strbuf_printf(b, "  %-13s%s\n", "", gwhy);
        }
    }
    return b->oom ? -1 : 0;
}

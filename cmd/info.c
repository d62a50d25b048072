/* cmd/info.c: posenc info: what a config.json implies about position encoding, as text or JSON. */
#if !defined(_GNU_SOURCE) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L /* fileno, open_memstream under plain -std=c11 */
#endif
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cmd/common.h"
#include "formats/report/describe_out.h"
#include "formats/report/info_out.h"
#include "cmd/opts.h"
#include "formats/files/gguf_rope.h"
#include "posenc/llamacpp.h"
#include "posenc/vllm.h"

/* Text and JSON are written to a memory stream and copied to stdout only when the whole report
 * succeeded, so an error leaves no partial report on stdout. */
static FILE *g_out;

struct info_opts {
    const char *config;
    const char *layer_type;
    int64_t seq_len;
    posenc_precision prec;
    int json;
    const char *family;
    int models;
    int runtimes;
    int64_t max_model_len;
    const char *gguf;
};

/* ---- the description of the config (lib/describe/describe.c; formats/report/describe_out.c renders it) ---- */

/* Print d as text (indented) or add it to j. 0, or -1 when out of memory. */
static int emit(const pe_desc *d, cJSON *j, const char *indent)
{
    if (j)
        return pe_describe_json(d, PE_DV_INFO, j);
    pe_strbuf b = { 0 };
    pe_describe_text(d, &b, indent);
    char *s = pe_strbuf_finish(&b);
    if (!s)
        return -1;
    fputs(s, g_out);
    free(s);
    return 0;
}

/* The RoPE parameter set of layer type lt (NULL: the config's one) at the options' sequence
 * length and precision, described into d. Prints the error line and returns the exit status. */
static int describe_rope(const struct info_opts *o, const posenc_model *m, const char *lt,
                         pe_desc *d)
{
    struct { posenc_rope_config cfg; posenc_rope_params par; posenc_vllm_info vi; } *r;
    posenc_error err = { 0 };
    int rc = 0;
    if (!(r = calloc(1, sizeof *r))) {
        cmd_msg("info", "out of memory");
        return CMD_EXIT_ERROR;
    }
    if (posenc_model_rope(m, lt, &r->cfg, &err) != POSENC_OK) {
        rc = cmd_rope_fail("info", m, &err);
    } else if (posenc_rope_params_for(&r->cfg, o->prec, posenc_model_family(m), o->seq_len,
                                      o->max_model_len, &r->par, &r->vi, &err) != POSENC_OK) {
        cmd_msg("info", "'%s': %s", o->config, err.msg);
        rc = CMD_EXIT_ERROR;
    } else if (o->prec == POSENC_PREC_GGML) {
        rc = cmd_ggml_params("info", o->config, m, lt, o->seq_len, &r->par);
    }
    if (rc == 0)
        pe_describe_rope(d, &r->cfg, &r->par, &r->vi, o->prec, o->seq_len);
    free(r);
    return rc;
}

/* The layer names of a config without layer types (Qwen3.5: full_attention, linear_attention)
 * with the encoding of each as "layers" in JSON (the text has them as "layer_types"). */
static int layer_names(const posenc_model *m, cJSON *j)
{
    size_t nt = posenc_model_layer_name_count(m);
    if (!j || posenc_model_encoding(m) != POSENC_ENC_ROPE || nt == 0 ||
        posenc_model_layer_type_count(m) != 0)
        return 0;
    {
        cJSON *lt = cJSON_AddObjectToObject(j, "layers");
        for (size_t i = 0; lt && i < nt; i++) {
            cJSON *e = cJSON_AddObjectToObject(lt, posenc_model_layer_name(m, i));
            if (!e || !cJSON_AddStringToObject(e, "encoding", posenc_encoding_name(
                                                   posenc_model_layer_name_encoding(m, i))))
                return -1;
        }
        return lt ? 0 : -1;
    }
}

/* Print j (then freed) or the text b holds; rc -1 (out of memory) becomes the error line. */
static int finish(cJSON *j, pe_strbuf *b, int rc)
{
    char *s = rc == 0 ? (j ? cJSON_Print(j) : pe_strbuf_finish(b)) : NULL;
    if (s)
        fprintf(g_out, "%s%s", s, j ? "\n" : "");
    if (j)
        cJSON_free(s);
    else
        free(s ? s : pe_strbuf_finish(b));
    cJSON_Delete(j);
    if (rc == 0 && s)
        return 0;
    cmd_msg("info", "out of memory");
    return CMD_EXIT_ERROR;
}

/* posenc info --models: the registry as a table. */
static int models_report(const struct info_opts *o)
{
    cJSON *arr = o->json ? cJSON_CreateArray() : NULL;
    pe_strbuf b = { 0 };
    return finish(arr, &b, (o->json && !arr) ? -1 : pe_info_models(arr, &b));
}

static int report(const struct info_opts *o, const posenc_model *m)
{
    posenc_encoding e = posenc_model_encoding(m);
    size_t nlt = posenc_model_layer_type_count(m);
    posenc_error err = { 0 };
    cJSON *j = o->json ? cJSON_CreateObject() : NULL, *layers = NULL, *names = NULL;
    pe_desc *d = pe_describe_new(), *r = pe_describe_new();
    int rc = CMD_EXIT_ERROR;
    if ((o->json && !j) || !d || !r)
        goto nomem;
    pe_describe_str(d, PE_DF_CONFIG, o->config);
    pe_describe_model(d, m);
    if (e != POSENC_ENC_ROPE && o->layer_type) {
        cmd_msg("info", "'%s': model_type '%s' uses %s: --layer-type does not apply", o->config,
                posenc_model_type(m), posenc_encoding_name(e));
        goto out;
    }
    if (e != POSENC_ENC_ROPE && pe_describe_bias(d, m, &err) != POSENC_OK) {
        rc = cmd_fail("info", &err);
        goto out;
    }
    if (emit(d, j, "") || layer_names(m, j))
        goto nomem;
    if (e == POSENC_ENC_ROPE && (nlt == 0 || o->layer_type)) {
        pe_describe_str(r, PE_DF_LAYER_TYPE, o->layer_type); /* null: the config's one */
        if ((rc = describe_rope(o, m, o->layer_type, r)) != 0)
            goto out;
        if (emit(r, j, ""))
            goto nomem;
    } else if (e == POSENC_ENC_ROPE) {
        if (j && !((names = cJSON_AddArrayToObject(j, "layer_types")) &&
                   (layers = cJSON_AddObjectToObject(j, "layers"))))
            goto nomem;
        for (size_t i = 0; i < nlt; i++) {
            const char *name = posenc_model_layer_type_name(m, i);
            cJSON *lj = j ? cJSON_CreateObject() : NULL;
            pe_describe_free(r);
            if (!(r = pe_describe_new()) || (j && !lj)) {
                cJSON_Delete(lj);
                goto nomem;
            }
            if ((rc = describe_rope(o, m, name, r)) != 0) {
                cJSON_Delete(lj);
                goto out;
            }
            if (j) {
                cJSON_AddItemToArray(names, cJSON_CreateString(name));
                cJSON_AddItemToObject(layers, name, lj);
            } else {
                fprintf(g_out, "layer_type %s:\n", name);
            }
            if (emit(r, lj, "  "))
                goto nomem;
        }
    }
    pe_describe_free(r);
    if (!(r = pe_describe_new()))
        goto nomem;
    pe_describe_model_notes(r, m);
    if (emit(r, j, ""))
        goto nomem;
    if (j) {
        char *s = cJSON_Print(j);
        if (!s)
            goto nomem;
        fprintf(g_out, "%s\n", s);
        cJSON_free(s);
    }
    rc = 0;
    goto out;
nomem:
    cmd_msg("info", "out of memory");
    rc = CMD_EXIT_ERROR;
out:
    pe_describe_free(d);
    pe_describe_free(r);
    cJSON_Delete(j);
    return rc;
}

/* --runtimes: where the runtimes differ in definition and, with --config, each precision's drift */
static int runtimes_report(const struct info_opts *o, const posenc_model *m)
{
    posenc_error err = { 0 };
    posenc_rope_config cfg;
    if (m && posenc_model_rope(m, o->layer_type, &cfg, &err) != POSENC_OK)
        return cmd_rope_fail("info", m, &err);
    cJSON *j = o->json ? cJSON_CreateObject() : NULL;
    pe_strbuf b = { 0 };
    return finish(j, &b, (o->json && !j) ? -1 : pe_info_runtimes(m, m ? &cfg : NULL, o->layer_type,
                                                                   o->config, o->max_model_len,
                                                                   j, &b));
}

/* --gguf: the file's RoPE (formats/files/gguf_rope.c describes it) as JSON or one line per key */
static int gguf_report(const struct info_opts *o)
{
    posenc_error err = { 0 };
    posenc_gguf_rope *g = malloc(sizeof *g);
    if (!g) {
        cmd_msg("info", "out of memory");
        return CMD_EXIT_ERROR;
    }
    if (posenc_gguf_read_rope(o->gguf, g, &err) != POSENC_OK) {
        free(g);
        return cmd_fail("info", &err);
    }
    if (o->layer_type) {
        /* a layer type the architecture does not have is the user's mistake, not the file's */
        posenc_ggml_rope r;
        if (posenc_ggml_rope_from_gguf_layer(g, o->seq_len, o->layer_type, &r, &err) ==
            POSENC_EINVAL) {
            free(g);
            cmd_msg("info", "%s", err.msg);
            return CMD_EXIT_USAGE;
        }
    }
    cJSON *j = pe_gguf_rope_json(g, o->seq_len, o->layer_type);
    free(g);
    if (!j) {
        cmd_msg("info", "out of memory");
        return CMD_EXIT_ERROR;
    }
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(j, "warning");
    if (cJSON_IsString(w))
        cmd_msg("info", "'%s': %s; rope mode unknown", o->gguf, w->valuestring);
    const cJSON *ws = cJSON_GetObjectItemCaseSensitive(j, "warnings"), *x;
    cJSON_ArrayForEach(x, ws)
        if (cJSON_IsString(x))
            cmd_msg("info", "'%s': warning: %s", o->gguf, x->valuestring);
    if (!o->json)
        fprintf(g_out, "gguf: %s\n", o->gguf);
    for (const cJSON *e = o->json ? NULL : j->child; e; e = e->next) {
        int sub = cJSON_IsObject(e);
        for (const cJSON *k = sub ? e->child : e; k; k = sub ? k->next : NULL) {
            char *t = cJSON_IsString(k) ? NULL : cJSON_PrintUnformatted(k);
            fprintf(g_out, "%s%s%s: %s\n", sub ? e->string : "", sub ? "." : "", k->string,
                    cJSON_IsString(k) ? k->valuestring : t ? t : "?");
            free(t);
        }
    }
    char *t = o->json ? cJSON_PrintUnformatted(j) : NULL;
    if (t)
        fprintf(g_out, "%s\n", t);
    free(t);
    cJSON_Delete(j);
    return 0;
}

enum { OPT_MODELS = 256, OPT_RUNTIMES };

static const struct cmd_opt info_opts[] = {
    CMD_OPT_GROUP("options:"),
    { .id = CMD_O_CONFIG, .help = "config.json to read (required)" },
    { .id = CMD_O_LAYER_TYPE, .short_opt = 'l', .arg = "T",
      .help = "report only layer type T (Gemma 3/4, MiMo full/sliding)" },
    { .id = CMD_O_SEQ_LEN, .short_opt = 'n',
      .help = "parameters at sequence length N (dynamic, longrope);\n"
              "default: what transformers computes at load time" },
    { .id = CMD_O_PRECISION, .short_opt = 'p',
      .help = "inv_freq values: hf (transformers' float32, default),\n"
              "exact (double), vllm (vLLM's float32, with its class,\n"
              "cache length, base and mscale) or ggml (llama.cpp's\n"
              "ggml_rope_ext arguments for the GGUF its converter\n"
              "writes, and ggml's float32 angles at position 1)" },
    { .id = CMD_O_MAX_MODEL_LEN },
    { OPT_RUNTIMES, "runtimes", 0, NULL, CMD_T_FLAG, 0, 0,
      "where transformers, vLLM and llama.cpp differ in\n"
      "definition; with --config, each precision's drift from\n"
      "exact math at 4096, 131072 and 1048576 positions", NULL },
    { .id = CMD_O_FAMILY, .help = "resolve the config as this registry row, whatever its\n"
                                  "model_type says" },
    { .id = CMD_O_GGUF, .help = "a llama.cpp GGUF file: its RoPE keys and tensors and what\n"
                                "llama.cpp derives from them (rope mode, freq_scale,\n"
                                "ext_factor, attn_factor); --seq-len is then the context" },
    { OPT_MODELS, "models", 0, NULL, CMD_T_FLAG, 0, 0,
      "list the model-family registry (model_type, encoding,\n"
      "pairing, notes, source file)", NULL },
    { .id = CMD_O_JSON, .short_opt = 'j', .help = "print one JSON object instead of text" },
    { .id = CMD_O_HELP },
    CMD_OPTS_END
};

const struct cmd_spec cmd_info_spec = {
    "info",
    "usage: posenc info --config FILE [--layer-type T] [--seq-len N]\n"
    "                   [--precision exact|hf|vllm|ggml] [--max-model-len N]\n"
    "                   [--family NAME] [--json]\n"
    "       posenc info --gguf FILE [--layer-type T] [--seq-len N] [--json]\n"
    "       posenc info --models [--json]\n"
    "       posenc info --runtimes [--config FILE [--layer-type T]] [--json]\n"
    "\n"
    "Resolve a Hugging Face config.json the way transformers does and report the position\n"
    "encoding: RoPE type, theta and where it came from, head and rotary dims, pairing style,\n"
    "scaling parameters, inv_freq and attention scaling (or the ALiBi, T5 or learned-table\n"
    "parameters), plus notes on defaults posenc filled in.\n"
    "\n",
    26, info_opts
};

int cmd_info(int argc, char **argv)
{
    struct info_opts o = { .prec = POSENC_PREC_HF };
    int c, prec_given = 0;
    struct cmd_parse p;
    cmd_opts_begin(&p, &cmd_info_spec, argc, argv);
    while ((c = cmd_opts_next(&p)) > 0) {
        switch (c) {
        case CMD_O_CONFIG: o.config = p.arg; break;
        case CMD_O_LAYER_TYPE: o.layer_type = p.arg; break;
        case CMD_O_FAMILY: o.family = p.arg; break;
        case OPT_MODELS: o.models = 1; break;
        case CMD_O_GGUF: o.gguf = p.arg; break;
        case OPT_RUNTIMES: o.runtimes = 1; break;
        case CMD_O_MAX_MODEL_LEN: o.max_model_len = p.i64; break;
        case CMD_O_SEQ_LEN: o.seq_len = p.i64; break;
        case CMD_O_PRECISION: o.prec = p.precision; prec_given = 1; break;
        case CMD_O_JSON: o.json = 1; break;
        }
    }
    if (c == CMD_OPTS_EXIT)
        return p.rc;
    if (cmd_opts_max_args(&p, 0))
        return CMD_EXIT_USAGE;
    if (o.models && (o.config || o.family || o.layer_type || o.seq_len))
        return cmd_usage_error("info", "--models lists the registry: it takes no config "
                                          "options (only --json)");
    if (o.runtimes && (o.models || o.seq_len || prec_given))
        return cmd_usage_error("info", "--runtimes takes only --config, --layer-type, "
                                          "--family, --max-model-len and --json");
    if (o.max_model_len && o.prec != POSENC_PREC_VLLM && !o.runtimes)
        return cmd_usage_error("info", "--max-model-len applies only to --precision vllm "
                                          "and --runtimes");
    if (o.gguf && (o.config || o.models || o.runtimes || o.family || prec_given ||
                   o.max_model_len))
        return cmd_usage_error("info", "--gguf FILE reads a GGUF file: it takes only "
                                          "--layer-type, --seq-len and --json");
    if (!o.config && !o.models && !o.runtimes && !o.gguf)
        return cmd_usage_error("info", "--config FILE is required");
    if (o.runtimes && !o.config && (o.layer_type || o.family))
        return cmd_usage_error("info", "--layer-type and --family need --config");
    posenc_model *m = NULL;
    if (!o.models && o.config) {
        int lrc = cmd_load_config("info", o.config, o.family, &m);
        if (lrc)
            return lrc;
    }
    char *text = NULL;
    size_t tlen = 0;
    g_out = open_memstream(&text, &tlen);
    if (!g_out) {
        posenc_model_free(m);
        cmd_msg("info", "out of memory");
        return CMD_EXIT_ERROR;
    }
    int rc = o.gguf       ? gguf_report(&o)
             : o.models   ? models_report(&o)
             : o.runtimes ? runtimes_report(&o, m)
                          : report(&o, m);
    posenc_model_free(m);
    if (fclose(g_out) != 0 && rc == 0) {
        cmd_msg("info", "out of memory");
        rc = CMD_EXIT_ERROR;
    }
    g_out = NULL;
    if (rc == 0 && text)
        fwrite(text, 1, tlen, stdout);
    free(text);
    return rc;
}

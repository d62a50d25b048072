/* llama_arch.c: llama.cpp's architectures (lib/model/llama_arch.def) and what its loader derives from
 * a GGUF file's RoPE keys (posenc_ggml_rope_from_gguf): src/llama-model.cpp load_hparams, the
 * per-architecture load_arch_hparams (src/models/), src/llama-context.cpp's cparams, in float32
 * where they are float32 (all ggml-org/llama.cpp). No I/O. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lib/model/llama_arch.h"
#include "lib/model/model_json.h"
#include "posenc/llamacpp.h"

/* x rounded to float32, as numpy and torch round: out of range is infinity (a plain C cast of
 * an out-of-range double is undefined) */
float pe_tof(double x)
{
    if (x > FLT_MAX || x < -FLT_MAX)
        return x > 0 ? INFINITY : -INFINITY;
    return (float)x;
}

/* ---- the architecture table (lib/model/llama_arch.def) ---- */



#define NONE POSENC_GGML_ROPE_NONE
#define NORM POSENC_GGML_ROPE_NORM
#define NEOX POSENC_GGML_ROPE_NEOX
#define MROPE POSENC_GGML_ROPE_MROPE
#define IMROPE POSENC_GGML_ROPE_IMROPE
#define VISION POSENC_GGML_ROPE_VISION
#define ARCH(n, ...) { .name = n, .mode = __VA_ARGS__ },
static const pe_arch_row arch_rows[] = {
#include "lib/model/llama_arch.def"
};
#undef ARCH
#undef NONE
#undef NORM
#undef NEOX
#undef MROPE
#undef IMROPE
#undef VISION

const pe_arch_row *pe_llama_arch(const char *name)
{
    for (size_t i = 0; name && i < sizeof arch_rows / sizeof *arch_rows; i++)
        if (strcmp(arch_rows[i].name, name) == 0)
            return &arch_rows[i];
    return NULL;
}

void posenc_ggml_arch_info(const char *arch, posenc_ggml_arch *out)
{
    const pe_arch_row *r = pe_llama_arch(arch);
    memset(out, 0, sizeof *out);
    out->mode = POSENC_GGML_ROPE_NONE;
    out->mode_sections = POSENC_GGML_ROPE_NONE;
    if (!r)
        return;
    out->known = 1;
    out->mode = (posenc_ggml_mode)r->mode;
    out->mode_sections = (posenc_ggml_mode)(r->mode_sections ? r->mode_sections : r->mode);
    out->converter = r->conv != CV_NONE;
    out->kq_known = r->kq != KQ_UNREAD;
    out->reads_sections = r->sections != SEC_NONE;
}

const char *posenc_ggml_mode_name(posenc_ggml_mode m)
{
    switch (m) {
    case POSENC_GGML_ROPE_NONE: return "none";
    case POSENC_GGML_ROPE_NORM: return "norm";
    case POSENC_GGML_ROPE_NEOX: return "neox";
    case POSENC_GGML_ROPE_MROPE: return "mrope";
    case POSENC_GGML_ROPE_VISION: return "vision";
    case POSENC_GGML_ROPE_IMROPE: return "imrope";
    }
    return "unknown";
}

/* ---- what llama.cpp derives ---- */

static float get_mscale(float scale, float mscale)
{
    return scale <= 1.0f ? 1.0f : (0.1f * mscale * logf(scale) + 1.0f);
}

posenc_status posenc_ggml_rope_from_gguf(const posenc_gguf_rope *g, int64_t n_ctx,
                                         posenc_ggml_rope *out, posenc_error *err)
{
    const pe_arch_row *row = pe_llama_arch(g->arch);
    if (!row)
        return posenc_seterr(err, POSENC_EUNSUPPORTED,
                             "architecture '%.60s' is not one llama.cpp knows (src/llama-arch.cpp)",
                             g->arch);
    if (!(g->has & POSENC_GGUF_CONTEXT_LENGTH) || !(g->has & POSENC_GGUF_EMBEDDING_LENGTH))
        return posenc_seterr(err, POSENC_EFORMAT,
                             "llama.cpp refuses the file: %s.context_length and %s.embedding_length "
                             "are required (src/llama-model.cpp load_hparams)",
                             g->arch, g->arch);
    posenc_ggml_rope r;
    memset(&r, 0, sizeof r);
    /* load_hparams */
    uint32_t n_ctx_train = (uint32_t)g->context_length;
    uint32_t n_ctx_orig_yarn = g->has & POSENC_GGUF_ORIG_CTX ? (uint32_t)g->original_context_length
                                                             : n_ctx_train;
    float freq_base = g->has & POSENC_GGUF_FREQ_BASE ? pe_tof(g->freq_base) : 10000.0f;
    const char *stype = g->has & POSENC_GGUF_SCALING_TYPE ? g->scaling_type : "linear";
    int yarn = strcmp(stype, "yarn") == 0, none = strcmp(stype, "none") == 0;
    if (!yarn && !none && strcmp(stype, "linear") != 0 && strcmp(stype, "longrope") != 0)
        return posenc_seterr(err, POSENC_EFORMAT,
                             "llama.cpp refuses the file: %s.rope.scaling.type '%.16s' is not "
                             "none, linear, yarn or longrope",
                             g->arch, stype);
    float ropescale = 0.0f;
    if (g->has & POSENC_GGUF_SCALING_FACTOR)
        ropescale = pe_tof(g->scaling_factor);
    else if (g->has & POSENC_GGUF_SCALE_LINEAR)
        ropescale = pe_tof(g->scaling_factor);
    float freq_scale_train = ropescale == 0.0f ? 1.0f : 1.0f / ropescale;
    float rope_attn_factor = g->has & POSENC_GGUF_ATTN_FACTOR ? pe_tof(g->attn_factor) : 1.0f;
    uint32_t n_embd = (uint32_t)g->embedding_length;
    uint32_t n_head = g->has & POSENC_GGUF_HEAD_COUNT ? (uint32_t)g->head_count : 0;
    uint32_t head_k = 0, n_rot = 0;
    if (n_head > 0) {
        head_k = g->has & POSENC_GGUF_KEY_LENGTH ? (uint32_t)g->key_length : n_embd / n_head;
        n_rot = g->has & POSENC_GGUF_DIMENSION_COUNT ? (uint32_t)g->dimension_count : head_k;
        if (row->nrot_full && n_rot != head_k)
            return posenc_seterr(err, POSENC_EFORMAT,
                                 "llama.cpp refuses the file: invalid n_rot: %u, expected %u "
                                 "(%s requires rope.dimension_count = the head size)",
                                 n_rot, head_k, g->arch);
    }
    /* the tables hold POSENC_MAX_FREQ frequencies (posenc_ggml_rope_cossin's callers size their
     * arrays so); llama.cpp itself takes any n_rot up to the head size */
    if (n_rot > 2 * POSENC_MAX_FREQ)
        return posenc_seterr(err, POSENC_EUNSUPPORTED,
                             "%u rotated dims (%s.rope.dimension_count or the head size); posenc "
                             "computes at most %d", n_rot, g->arch, 2 * POSENC_MAX_FREQ);
    /* per-architecture keys (src/models/ARCH.cpp load_arch_hparams) */
    float yarn_ext = -1.0f, yarn_attn = 1.0f, beta_fast = 32.0f, beta_slow = 1.0f, log_mul = 0.0f;
    if (row->load == LD_MISTRAL3 || row->load == LD_GROK) {
        if (g->has & POSENC_GGUF_YARN_BETA_FAST)
            beta_fast = pe_tof(g->yarn_beta_fast);
        if (g->has & POSENC_GGUF_YARN_BETA_SLOW)
            beta_slow = pe_tof(g->yarn_beta_slow);
    }
    if (row->load == LD_GROK) {
        if (g->has & POSENC_GGUF_YARN_EXT_FACTOR)
            yarn_ext = pe_tof(g->yarn_ext_factor);
        if (g->has & POSENC_GGUF_YARN_ATTN_FACTOR)
            yarn_attn = pe_tof(g->yarn_attn_factor);
    }
    if (row->load == LD_MISTRAL3 && (g->has & POSENC_GGUF_YARN_LOG_MUL))
        log_mul = pe_tof(g->yarn_log_multiplier);
    if (row->load == LD_DEEPSEEK2 && (g->has & POSENC_GGUF_YARN_LOG_MUL))
        log_mul = pe_tof(g->yarn_log_multiplier) / 0.1f;
    /* hunyuan-vl.cpp load_arch_hparams (hunyuan-dense's loader): "XDRoPE / NTK-aware
     * scaling": rope_freq_base_train * powf(alpha, (float)dim / (float)(dim - 2)), dim the
     * head size */
    if (row->load == LD_HUNYUAN_VL && (g->has & POSENC_GGUF_SCALING_ALPHA) &&
        pe_tof(g->scaling_alpha) > 0.0f && head_k > 2)
        freq_base = freq_base * powf(pe_tof(g->scaling_alpha), (float)head_k / (float)(head_k - 2));
    /* mimo2.cpp, cohere2moe.cpp, mellum.cpp (with a window): without a uint32 pattern the
     * per-layer array is read with get_key_or_arr's default required = true */
    if (row->swa_period < 0 && !(g->has & POSENC_GGUF_SWA_PATTERN) &&
        (row->swa != SWA_OLMO2 ||
         ((g->has & POSENC_GGUF_SLIDING_WINDOW) && g->sliding_window > 0)))
        return posenc_seterr(err, POSENC_EFORMAT,
                             "llama.cpp refuses the file: %s.attention.sliding_window_pattern "
                             "is required (src/models/%s.cpp)",
                             g->arch, g->arch);
    int sections[4] = { 0 };
    if (row->sections) {
        if (g->n_sections > 0)
            for (int i = 0; i < 4 && i < g->n_sections; i++)
                sections[i] = g->sections[i];
        else if (row->sections == SEC_REQUIRED)
            return posenc_seterr(err, POSENC_EFORMAT,
                                 "llama.cpp refuses the file: %s.rope.dimension_sections is "
                                 "required",
                                 g->arch);
    }
    r.mode = (posenc_ggml_mode)row->mode;
    if (row->mode_sections && sections[0] > 0 && sections[1] > 0)
        r.mode = (posenc_ggml_mode)row->mode_sections;
    memcpy(r.sections, sections, sizeof sections);
    /* llama_context's cparams (src/llama-context.cpp), default context parameters */
    if (n_ctx > (int64_t)UINT32_MAX)
        return posenc_seterr(err, POSENC_EINVAL, "llama.cpp's n_ctx is a uint32, not %lld",
                             (long long)n_ctx);
    /* src/llama-context.cpp: n_ctx (0: n_ctx_train) padded to 256; with one sequence
     * n_ctx_seq = n_ctx, which get_rope_factors compares with n_ctx_orig_yarn */
    uint64_t ctx = n_ctx > 0 ? (uint64_t)n_ctx : n_ctx_train;
    ctx = (ctx + 255) / 256 * 256;
    float freq_scale = freq_scale_train;
    uint32_t n_ctx_orig = n_ctx_orig_yarn != 0 ? n_ctx_orig_yarn : n_ctx_train;
    if (none)
        freq_scale = 1.0f;
    float ext = yarn_ext, attn = yarn_attn;
    if (ext < 0.0f)
        ext = yarn ? 1.0f : 0.0f;
    if (ext != 0) {
        const float factor = 1.0f / freq_scale;
        if (log_mul != 0.0f) {
            float mscale = 1.0f;
            if (row->mscale_log_mul && log_mul != 1.0f)
                mscale = log_mul;
            attn = get_mscale(factor, mscale) / get_mscale(factor, log_mul);
        } else {
            attn = get_mscale(factor, 1.0f);
        }
        attn *= 1.0f / (1.0f + 0.1f * logf(factor));
    }
    attn *= rope_attn_factor;
    r.n_dims = (int)n_rot;
    r.head_dim = (int)head_k;
    r.n_ctx_orig = (int)n_ctx_orig;
    r.freq_base = freq_base;
    r.freq_scale = freq_scale;
    r.ext_factor = ext;
    r.attn_factor = attn;
    r.beta_fast = beta_fast;
    r.beta_slow = beta_slow;
    r.note = row->note;
    /* llama_model::get_rope_factors: rope_freqs, else long past n_ctx_orig_yarn, else short */
    const float *ff = NULL;
    int nf = 0;
    if (g->n_rope_freqs > 0) {
        ff = g->rope_freqs;
        nf = g->n_rope_freqs;
    } else if (ctx > n_ctx_orig_yarn && g->n_factors_long > 0) {
        ff = g->factors_long;
        nf = g->n_factors_long;
    } else if (g->n_factors_short > 0) {
        ff = g->factors_short;
        nf = g->n_factors_short;
    }
    if (ff) {
        if (nf != (int)n_rot / 2)
            return posenc_seterr(err, POSENC_EFORMAT,
                                 "llama.cpp refuses the file: a RoPE factor tensor holds %d "
                                 "values, not n_rot / 2 = %u",
                                 nf, n_rot / 2);
        memcpy(r.freq_factors, ff, (size_t)nf * sizeof *ff);
        r.n_freq_factors = nf;
    }
    switch (row->kq) {
    case KQ_HEAD:
        r.kq_scale = head_k ? 1.0f / sqrtf((float)head_k) : 0;
        break;
    case KQ_ROT:
        r.kq_scale = n_rot ? 1.0f / sqrtf((float)n_rot) : 0;
        break;
    case KQ_MLA: {
        uint32_t kmla = g->has & POSENC_GGUF_KEY_LENGTH_MLA ? (uint32_t)g->key_length_mla : head_k;
        const float attn_org = attn * (1.0f + 0.1f * logf(1.0f / freq_scale));
        const float mscale = attn_org * (1.0f + 0.1f * log_mul * logf(1.0f / freq_scale));
        r.kq_scale = kmla ? 1.0f * mscale * mscale / sqrtf((float)kmla) : 0;
        break;
    }
    default:
        r.kq_scale = 0; /* not read */
    }
    *out = r;
    return POSENC_OK;
}

/* exaone4.cpp load_arch_hparams: sliding layers (and the global layers' NoPE) only for the
 * 64-layer 32B; every other file is one layer type with RoPE (lib/model/llama_arch.def
 * .swa_n_layer); afmoe.cpp: only with a window (.swa_window) */
static int swa_off(const pe_arch_row *row, const posenc_gguf_rope *g)
{
    if (row->swa_window && !((g->has & POSENC_GGUF_SLIDING_WINDOW) && g->sliding_window > 0))
        return 1;
    return row->swa_n_layer > 0 &&
           (!(g->has & POSENC_GGUF_BLOCK_COUNT) || g->block_count != row->swa_n_layer);
}

posenc_status posenc_ggml_rope_from_gguf_layer(const posenc_gguf_rope *g, int64_t n_ctx,
                                               const char *layer_type, posenc_ggml_rope *out,
                                               posenc_error *err)
{
    posenc_ggml_rope r;
    posenc_status st = posenc_ggml_rope_from_gguf(g, n_ctx, &r, err);
    if (st != POSENC_OK)
        return st;
    const pe_arch_row *row = pe_llama_arch(g->arch);
    if ((row->swa || row->nope) && layer_type && !swa_off(row, g)) {
        int sliding = strcmp(layer_type, "sliding_attention") == 0 ||
                      (row->nope == NOPE_STEP && strcmp(layer_type, "chunked_attention") == 0);
        if (!sliding && strcmp(layer_type, "full_attention") != 0)
            return posenc_seterr(err, POSENC_EINVAL,
                                 "llama.cpp's %s has sliding_attention and full_attention "
                                 "layers, not '%.60s'",
                                 g->arch, layer_type);
        int window = (g->has & POSENC_GGUF_SLIDING_WINDOW) && g->sliding_window > 0;
        /* cohere2.cpp ropes only the sliding layers; cohere2moe.cpp the leading dense ones too
         * (force_rope = il < n_layer_dense_lead) */
        int dense = row->nope == NOPE_GLOBAL_DENSE && (g->has & POSENC_GGUF_DENSE_LEAD) &&
                    g->dense_lead > 0;
        if (!sliding && (row->nope == NOPE_GLOBAL || (row->nope == NOPE_GLOBAL_DENSE && !dense)))
            return posenc_seterr(err, POSENC_EUNSUPPORTED,
                                 "llama.cpp applies no RoPE to %s's full_attention layers "
                                 "(src/models/%s.cpp ropes only the sliding-window layers)",
                                 g->arch, g->arch);
        /* lib/model/llama_arch.def .swa: what the sliding layers run with (llama_model::
         * get_rope_freq_base / get_rope_freq_scale, or the graph's own arguments); ext_factor,
         * attn_factor and the betas stay the context's unless said */
        if (sliding) {
            if (row->note_swa)
                r.note = row->note_swa;
            float swa_base = g->has & POSENC_GGUF_FREQ_BASE_SWA ? pe_tof(g->freq_base_swa) : 0;
            switch (row->swa) {
            case SWA_GEMMA3: /* gemma3.cpp: the iswa graph only with a window > 0 */
                if (!window)
                    break;
                /* fall through */
            case SWA_DEFAULT: /* hparams.rope_freq_base_train_swa 10000, scale 1 */
                r.freq_base = swa_base ? swa_base : 10000.0f;
                r.freq_scale = 1.0f;
                break;
            case SWA_TRAIN: /* the key, else rope_freq_base_train; rope_freq_scale_train */
                if (swa_base)
                    r.freq_base = swa_base;
                break;
            case SWA_OLMO2: /* olmo2.cpp: freq_base, 1.0, ext_factor 0, attn_factor 1 */
                if (window) {
                    r.freq_scale = 1.0f;
                    r.ext_factor = 0.0f;
                    r.attn_factor = 1.0f;
                }
                break;
            default: /* SWA_CTX: the context's arguments */
                break;
            }
        }
    }
    *out = r;
    return POSENC_OK;
}

int posenc_ggml_swa_layers(const posenc_gguf_rope *g, int n, uint8_t *sliding)
{
    const pe_arch_row *row = pe_llama_arch(g->arch);
    if (!row || !row->swa || n < 0)
        return 0;
    memset(sliding, 0, (size_t)n);
    int has_window = (g->has & POSENC_GGUF_SLIDING_WINDOW) != 0;
    int window = has_window && g->sliding_window > 0;
    /* gemma3.cpp and olmo2.cpp: no window, no sliding layers; llama4.cpp: a window of 0 */
    if ((row->swa == SWA_GEMMA3 || row->swa == SWA_OLMO2) && !window)
        return 1;
    if (row->nope == NOPE_STEP && has_window && g->sliding_window == 0)
        return 1;
    if (swa_off(row, g))
        return 1;
    int scalar = (g->has & POSENC_GGUF_SWA_PATTERN) && g->n_swa_layers == 0;
    if (row->swa_period < 0 && !(row->swa_dense_first && scalar)) {
        /* mimo2.cpp: the per-layer array; cohere2moe.cpp: the array unless a uint32 */
        for (int i = 0; i < n && i < g->n_swa_layers; i++)
            sliding[i] = g->swa_layers[i] != 0;
        return 1;
    }
    /* the uint32 key, else the default; an array is ignored (scalar get_key_or_arr) */
    int64_t p = scalar ? g->swa_period : row->swa_period;
    for (int il = 0; il < n; il++) /* llama_hparams::set_swa_pattern */
        sliding[il] = p == 0 || (row->swa_dense_first ? il % p != 0 : il % p < p - 1);
    return 1;
}

int posenc_ggml_nope_layers(const posenc_gguf_rope *g, int n, uint8_t *nope)
{
    const pe_arch_row *row = pe_llama_arch(g->arch);
    if (row && row->rope_switch && n >= 0 && (g->has & POSENC_GGUF_ROPE_FINETUNED) &&
        !g->rope_finetuned) {
        /* granite.cpp, granite-hybrid.cpp: rope_pattern = rope.scaling.finetuned (default
         * true) for every layer; switched on, which layers attend (granitehybrid's SSM
         * layers do not) is not read here */
        memset(nope, 1, (size_t)n);
        return 1;
    }
    if (row && row->rope_n_layer > 0 && n >= 0) {
        /* baichuan.cpp: RoPE for LLM_TYPE_7B (32 layers) only; 13B and unknown sizes none */
        int off = !(g->has & POSENC_GGUF_BLOCK_COUNT) || g->block_count != row->rope_n_layer;
        memset(nope, off, (size_t)n);
        return 1;
    }
    if (!row || !row->nope || n < 0)
        return 0;
    if (row->nope == NOPE_GLOBAL || row->nope == NOPE_GLOBAL_DENSE) {
        /* cohere2.cpp: RoPE only `if (is_swa)`; cohere2moe.cpp `is_swa || force_rope` */
        if (swa_off(row, g)) { /* exaone4.cpp: `is_swa(il) || swa_type == NONE` */
            memset(nope, 0, (size_t)n);
            return 1;
        }
        int64_t lead = row->nope == NOPE_GLOBAL_DENSE && (g->has & POSENC_GGUF_DENSE_LEAD)
                           ? g->dense_lead
                           : 0;
        posenc_ggml_swa_layers(g, n, nope);
        for (int i = 0; i < n; i++)
            nope[i] = !nope[i] && i >= lead;
        return 1;
    }
    /* llama4.cpp: n_no_rope_layer_step 4 (src/llama-hparams.h), n_layer when the window is 0;
     * afmoe.cpp keeps the 4 (NOPE_EVERY4) */
    int every = row->nope == NOPE_STEP && (g->has & POSENC_GGUF_SLIDING_WINDOW) &&
                        g->sliding_window == 0
                    ? 0
                    : 4;
    for (int i = 0; i < n; i++)
        nope[i] = every && (i + 1) % every == 0;
    return 1;
}

/* ---- llama.cpp's own dump layout ---- */

const char *posenc_ggml_model_arch(const posenc_model *m)
{
    return m ? pe_model_gguf_arch(m) : NULL;
}

posenc_status posenc_ggml_layout_style(const char *arch, int has_sections, posenc_style style,
                                       posenc_style *out, int *permuted, posenc_error *err)
{
    const pe_arch_row *r = pe_llama_arch(arch);
    if (!arch)
        return posenc_seterr(err, POSENC_EUNSUPPORTED, "llama.cpp: the config names no "
                             "architecture posenc maps to llama.cpp's (lib/model/families.def "
                             "gguf_arch): give --gguf FILE");
    if (!r)
        return posenc_seterr(err, POSENC_EUNSUPPORTED, "llama.cpp: posenc has no rules for "
                             "architecture %s", arch);
    int mode = has_sections && r->mode_sections ? r->mode_sections : r->mode;
    if (mode == POSENC_GGML_ROPE_NONE)
        return posenc_seterr(err, POSENC_EUNSUPPORTED, "llama.cpp: architecture %s applies no "
                             "RoPE (llama_model_rope_type)", arch);
    /* ggml/src/ggml-cpu/ops.cpp: NORM rotates (x[2i], x[2i+1]) (rotate_pairs with n_offset 1),
     * NEOX, MROPE and IMROPE (x[i], x[i + n_dims/2]). A neox config under NORM is right only
     * because convert_hf_to_gguf.py permuted q_proj/k_proj (conversion/llama.py
     * LlamaModel.permute: each head's two halves interleaved), so in llama.cpp's own tensors
     * the pairs are neighbours. */
    posenc_style s = mode == POSENC_GGML_ROPE_NORM ? POSENC_STYLE_GPTJ : POSENC_STYLE_NEOX;
    if (mode != POSENC_GGML_ROPE_NORM && style == POSENC_STYLE_GPTJ)
        return posenc_seterr(err, POSENC_EUNSUPPORTED, "llama.cpp rotates halves (%s) for "
                             "architecture %s where the config pairs neighbours (gptj): the "
                             "converter's layout of Q/K for that is not known",
                             posenc_ggml_mode_name((posenc_ggml_mode)mode), arch);
    *out = s;
    if (permuted)
        *permuted = mode == POSENC_GGML_ROPE_NORM && style == POSENC_STYLE_NEOX;
    return POSENC_OK;
}

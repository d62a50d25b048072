/* llama_arch.h: lib/model/llama_arch.def's rows (internal to lib/runtimes/llamacpp.c and lib/model/llama_arch.c). */
#ifndef PE_LLAMA_ARCH_H
#define PE_LLAMA_ARCH_H

enum { CV_NONE = 0, CV_TEXT, CV_LLAMA, CV_MINISTRAL3, CV_QWEN3NEXT, CV_QWEN35, CV_PHI3,
       CV_DEEPSEEK2, CV_PHI2, CV_GPTNEOX, CV_STABLELM, CV_COMMANDR, CV_GRANITE, CV_GEMMA3,
       CV_GEMMA2, CV_GEMMA3N, CV_COHERE2, CV_OLMO2, CV_MINIMAXM2, CV_MIMO2, CV_GLM4,
       CV_LLAMA4, CV_GLMDSA, CV_GEMMA, CV_NEMOTRON, CV_BITNET, CV_DBRX, CV_FALCON,
       CV_JAIS2, CV_HUNYUAN, CV_HUNYUAN_MOE, CV_CHATGLM, CV_EXAONE4,
       CV_MELLUM, CV_AFMOE, CV_EXAONE_MOE, CV_BAICHUAN, CV_COHERE2MOE,
       CV_EUROBERT, CV_MODERNBERT, CV_FALCONH1, CV_GRANITEHYBRID };
enum { LD_BASE = 0, LD_MISTRAL3, LD_DEEPSEEK2, LD_GROK, LD_HUNYUAN_VL };
/* the RoPE of the sliding-window layers (lib/model/llama_arch.def .swa) */
enum { SWA_NONE = 0, SWA_GEMMA3, SWA_DEFAULT, SWA_TRAIN, SWA_CTX, SWA_OLMO2 };
/* layers llama.cpp gives no RoPE (lib/model/llama_arch.def .nope) */
enum { NOPE_NONE = 0, NOPE_GLOBAL, NOPE_STEP, NOPE_EVERY4, NOPE_GLOBAL_DENSE };
enum { KQ_UNREAD = 0, KQ_HEAD, KQ_ROT, KQ_MLA };
enum { SEC_NONE = 0, SEC_OPTIONAL, SEC_REQUIRED };

typedef struct pe_arch_row {
    const char *name;
    int mode;           /* posenc_ggml_mode */
    int mode_sections;  /* 0: the same as mode */
    int conv, load, kq, nrot_full, sections;
    int swa, nope;
    int swa_period;     /* the loader's default sliding_window_pattern; -1: an array is required */
    int swa_n_layer;    /* > 0: the loader sets the sliding layers up only for this block_count */
    int swa_window;     /* the loader sets sliding layers up only with attention.sliding_window > 0 */
    int rope_n_layer;   /* > 0: the graph ropes only files of this block_count, no layer otherwise */
    int swa_dense_first; /* a uint32 period p makes il % p != 0 sliding (set_swa_pattern(p, true)) */
    int rope_switch;    /* rope.scaling.finetuned false (default true): no layer is rotated */
    const char *note;   /* where llama.cpp and transformers differ (one line) */
    const char *note_swa; /* the same, for the sliding-window layers only */
    int mscale_log_mul; /* YaRN's mscale = yarn_log_mul when it is not 1 (llama-context.cpp:
                           "special-case DEEPSEEK v2", LLM_ARCH_DEEPSEEK2 only) */
} pe_arch_row;

/* The row of architecture name, NULL when llama.cpp has none. Borrowed (static). */
const pe_arch_row *pe_llama_arch(const char *name);

/* x rounded to float32; out of range is infinity */
float pe_tof(double x);

#endif

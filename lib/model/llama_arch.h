/* llama_arch.h: lib/model/llama_arch.def's rows (internal to lib/runtimes/llamacpp.c and lib/model/llama_arch.c). */
#ifndef PE_LLAMA_ARCH_H
#define PE_LLAMA_ARCH_H

enum { CV_NONE = 0, CV_TEXT, CV_LLAMA, CV_MINISTRAL3, CV_QWEN3NEXT, CV_QWEN35, CV_PHI3,
       CV_DEEPSEEK2, CV_PHI2, CV_GPTNEOX, CV_STABLELM, CV_COMMANDR, CV_GRANITE, CV_GEMMA3 };
enum { LD_BASE = 0, LD_MISTRAL3, LD_DEEPSEEK2, LD_GROK, LD_GEMMA3 };
enum { KQ_UNREAD = 0, KQ_HEAD, KQ_ROT, KQ_MLA };
enum { SEC_NONE = 0, SEC_OPTIONAL, SEC_REQUIRED };

typedef struct pe_arch_row {
    const char *name;
    int mode;           /* posenc_ggml_mode */
    int mode_sections;  /* 0: the same as mode */
    int conv, load, kq, nrot_full, sections;
    int mscale_log_mul; /* YaRN's mscale = yarn_log_mul when it is not 1 (llama-context.cpp:
                           "special-case DEEPSEEK v2", LLM_ARCH_DEEPSEEK2 only) */
} pe_arch_row;

/* The row of architecture name, NULL when llama.cpp has none. Borrowed (static). */
const pe_arch_row *pe_llama_arch(const char *name);

/* x rounded to float32; out of range is infinity */
float pe_tof(double x);

#endif

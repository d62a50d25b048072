/* formats/report/info_out.h (internal): posenc info's two reports that are not a model's description:
 * the model-family registry (--models) and the runtimes' differences with a config's drift
 * (--runtimes), as JSON or text. (A model's description is lib/describe/describe.h.) */
#ifndef POSENC_FORMATS_INFO_OUT_H
#define POSENC_FORMATS_INFO_OUT_H

#include <cjson/cJSON.h>

#include "posenc/model.h"
#include "formats/io/strbuf.h"

/* The registry: one object per model_type appended to arr, or (arr NULL) a table appended to
 * b. 0, or -1 when out of memory. */
int pe_info_models(cJSON *arr, pe_strbuf *b);
/* The runtimes' differences (posenc_runtime_diff) and, with m and cfg (m's parameter set of
 * layer_type), the drift of each precision from exact math at positions 4095, 131071 and
 * 1048575 (vLLM with max_model_len, 0 = the config's): into j ("runtimes", "drift") when j is
 * set, else as text appended to b. config names the config in "drift". 0, or -1 when out of
 * memory. */
int pe_info_runtimes(const posenc_model *m, const posenc_rope_config *cfg, const char *layer_type,
                     const char *config, int64_t max_model_len, cJSON *j, pe_strbuf *b);

#endif

/* posenc/posenc.h: the whole public API of libposenc. */
#ifndef POSENC_POSENC_H
#define POSENC_POSENC_H

#define POSENC_VERSION "0.1.0"

#include "posenc/error.h"
#include "posenc/dtype.h"
#include "posenc/model.h"
#include "posenc/ggml.h"
#include "posenc/rope.h"
#include "posenc/vllm.h"
#include "posenc/io.h"
#include "posenc/config.h"
#include "posenc/bias.h"
#include "posenc/cpu.h"
#include "posenc/apply.h"
#include "posenc/verify.h"
#include "posenc/llamacpp.h"
#include "posenc/diff.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Static version string, e.g. "0.1.0". */
POSENC_API
const char *posenc_version(void);

#ifdef __cplusplus
}
#endif

#endif

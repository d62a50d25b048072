/* ggml_gguf_dump.c FILE.gguf: what llama.cpp's own GGUF reader sees in a file, one line per item.
 *
 * Built at test time against llama.cpp's prebuilt libggml-base.so (tests/interop/fetch.sh libs)
 * and the headers of the same source (tests/interop/fetch.sh src: ggml/include/gguf.h, ggml.h).
 * gguf_init_from_file (ggml-org/llama.cpp ggml/src/gguf.cpp) reads the file with its tensor data
 * into a ggml context; the dump prints:
 *
 *   version V / alignment A / data_offset N / n_kv K / n_tensors T
 *   kv KEY TYPE VALUE          (TYPE: gguf_type_name; arrays "array[TYPE]"; strings as JSON
 *                               strings; float32 as %.9g, float64 as %.17g: both exact)
 *   tensor NAME TYPE NE0,NE1,NE2,NE3 OFFSET NBYTES   (ne as ggml holds it: innermost first,
 *                               1 past the tensor's dimensions; ggml keeps no n_dims)
 *   data NAME V V ...          (f32, f16, bf16 as %.9g of the float value; f64 %.17g; i32, i64)
 *
 * tests/interop/gguf_dump.py prints the same lines from gguf-py's GGUFReader, so the two readers
 * and posenc's intent can be compared line by line. Exit 1 when ggml refuses the file. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ggml.h"
#include "gguf.h"

static void json_str(const char *s)
{
    putchar('"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            printf("\\%c", *p);
        else if (*p < 0x20)
            printf("\\u%04x", *p);
        else
            putchar(*p);
    }
    putchar('"');
}

/* element i of an array of type t at data */
static void elem(enum gguf_type t, const void *data, size_t i)
{
    const unsigned char *b = data;
    switch (t) {
    case GGUF_TYPE_UINT8: printf("%u", (unsigned)((const uint8_t *)b)[i]); break;
    case GGUF_TYPE_INT8: printf("%d", (int)((const int8_t *)b)[i]); break;
    case GGUF_TYPE_UINT16: printf("%u", (unsigned)((const uint16_t *)b)[i]); break;
    case GGUF_TYPE_INT16: printf("%d", (int)((const int16_t *)b)[i]); break;
    case GGUF_TYPE_UINT32: printf("%" PRIu32, ((const uint32_t *)b)[i]); break;
    case GGUF_TYPE_INT32: printf("%" PRId32, ((const int32_t *)b)[i]); break;
    case GGUF_TYPE_FLOAT32: printf("%.9g", (double)((const float *)b)[i]); break;
    case GGUF_TYPE_BOOL: printf("%s", ((const int8_t *)b)[i] ? "true" : "false"); break;
    case GGUF_TYPE_UINT64: printf("%" PRIu64, ((const uint64_t *)b)[i]); break;
    case GGUF_TYPE_INT64: printf("%" PRId64, ((const int64_t *)b)[i]); break;
    case GGUF_TYPE_FLOAT64: printf("%.17g", ((const double *)b)[i]); break;
    default: printf("?"); break;
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: ggml_gguf_dump FILE.gguf\n");
        return 2;
    }
    struct ggml_context *ctx = NULL;
    struct gguf_init_params params = { false, &ctx };
    struct gguf_context *g = gguf_init_from_file(argv[1], params);
    if (!g) {
        fprintf(stderr, "ggml_gguf_dump: gguf_init_from_file refused '%s'\n", argv[1]);
        return 1;
    }
    printf("version %" PRIu32 "\n", gguf_get_version(g));
    printf("alignment %zu\n", gguf_get_alignment(g));
    printf("data_offset %zu\n", gguf_get_data_offset(g));
    int64_t nkv = gguf_get_n_kv(g), nt = gguf_get_n_tensors(g);
    printf("n_kv %" PRId64 "\nn_tensors %" PRId64 "\n", nkv, nt);
    for (int64_t i = 0; i < nkv; i++) {
        enum gguf_type t = gguf_get_kv_type(g, i);
        printf("kv %s ", gguf_get_key(g, i));
        if (t == GGUF_TYPE_ARRAY) {
            enum gguf_type at = gguf_get_arr_type(g, i);
            size_t n = gguf_get_arr_n(g, i);
            printf("array[%s] [", gguf_type_name(at));
            for (size_t k = 0; k < n; k++) {
                if (k)
                    putchar(',');
                if (at == GGUF_TYPE_STRING)
                    json_str(gguf_get_arr_str(g, i, k));
                else if (at == GGUF_TYPE_ARRAY)
                    printf("?");
                else
                    elem(at, gguf_get_arr_data(g, i), k);
            }
            printf("]\n");
        } else if (t == GGUF_TYPE_STRING) {
            printf("%s ", gguf_type_name(t));
            json_str(gguf_get_val_str(g, i));
            putchar('\n');
        } else {
            printf("%s ", gguf_type_name(t));
            elem(t, gguf_get_val_data(g, i), 0);
            putchar('\n');
        }
    }
    for (int64_t i = 0; i < nt; i++) {
        const char *name = gguf_get_tensor_name(g, i);
        const int64_t *ne = gguf_get_tensor_ne(g, i);
        struct ggml_tensor *t = ggml_get_tensor(ctx, name);
        printf("tensor %s %s ", name, ggml_type_name(gguf_get_tensor_type(g, i)));
        for (int d = 0; d < GGML_MAX_DIMS; d++)
            printf("%s%" PRId64, d ? "," : "", ne[d]);
        printf(" %zu %zu\n", gguf_get_tensor_offset(g, i), gguf_get_tensor_size(g, i));
        if (!t)
            continue;
        int64_t n = ggml_nelements(t);
        printf("data %s", name);
        for (int64_t k = 0; k < n; k++) {
            switch (t->type) {
            case GGML_TYPE_F32: printf(" %.9g", (double)((const float *)t->data)[k]); break;
            case GGML_TYPE_F16:
                printf(" %.9g", (double)ggml_fp16_to_fp32(((const ggml_fp16_t *)t->data)[k]));
                break;
            case GGML_TYPE_BF16:
                printf(" %.9g", (double)ggml_bf16_to_fp32(((const ggml_bf16_t *)t->data)[k]));
                break;
            case GGML_TYPE_F64: printf(" %.17g", ((const double *)t->data)[k]); break;
            case GGML_TYPE_I32: printf(" %" PRId32, ((const int32_t *)t->data)[k]); break;
            case GGML_TYPE_I64: printf(" %" PRId64, ((const int64_t *)t->data)[k]); break;
            default: printf(" ?"); k = n; break;
            }
        }
        putchar('\n');
    }
    gguf_free(g);
    ggml_free(ctx);
    return ferror(stdout) ? 1 : 0;
}

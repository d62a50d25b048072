/* cmd/ls.c: `posenc ls FILE`: the arrays a file holds (name, dtype, shape, bytes) and its
 * metadata, as aligned text or as JSON; `--meta` lists the metadata alone with each key's type.
 * Reads headers only, never the data. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cmd/common.h"
#include "cmd/opts.h"

#define CMD "ls"

#define SHORT_ARRAY 8 /* text output shows this many elements of a longer array */

/* The dtype column: posenc's name, or the format's own for an array posenc cannot read (a
 * quantized GGUF tensor: "Q8_0"); the size in bytes from the file where the format knows it. */
static const char *array_dtype(const posenc_container *c, size_t i, uint64_t *nbytes,
                               posenc_error *err, posenc_status *st)
{
    const posenc_array_info *a = posenc_container_array(c, i);
    int readable = 1;
    uint64_t nb = 0;
    const char *native = posenc_container_array_type(c, i, &nb, &readable);
    *st = POSENC_OK;
    if (native) {
        *nbytes = nb;
        return readable ? posenc_dtype_name(a->dtype) : native;
    }
    *st = posenc_shape_size(a->ndim, a->shape, a->dtype, NULL, nbytes, err);
    return posenc_dtype_name(a->dtype);
}

/* The JSON kind of a value, for formats whose metadata has no types of its own. */
static const char *json_kind(const cJSON *v)
{
    if (cJSON_IsBool(v)) return "bool";
    if (cJSON_IsNumber(v)) return "number";
    if (cJSON_IsString(v)) return "string";
    if (cJSON_IsArray(v)) return "array";
    if (cJSON_IsObject(v)) return "object";
    return "null";
}

/* v as one line of JSON; arrays of more than SHORT_ARRAY elements shortened to their first ones
 * and "... (N values)". f32: numbers are float32 values (GGUF), shown with the fewest digits
 * that read back as the same float32. */
static void print_value(const cJSON *v, int shorten, int f32)
{
    if (cJSON_IsNumber(v)) {
        /* the shortest text that reads back as the same value (cJSON's own printing rounds to
         * 15 digits: 2^53 would show as 9.00719925474099e+15) */
        double d = v->valuedouble;
        char buf[64];
        if (d == (double)(long long)d && fabs(d) < 1e17)
            snprintf(buf, sizeof buf, "%.0f", d);
        else
            for (int prec = 1; prec <= 17; prec++) {
                snprintf(buf, sizeof buf, "%.*g", prec, d);
                if (f32 ? strtof(buf, NULL) == (float)d : strtod(buf, NULL) == d)
                    break;
            }
        fputs(buf, stdout);
        return;
    }
    if (!cJSON_IsArray(v)) {
        char *t = cJSON_PrintUnformatted(v);
        fputs(t ? t : "?", stdout);
        cJSON_free(t);
        return;
    }
    int n = cJSON_GetArraySize(v), k = 0;
    putchar('[');
    for (const cJSON *e = v->child; e && (k < SHORT_ARRAY || !shorten); e = e->next, k++) {
        if (k)
            fputs(shorten ? ", " : ",", stdout);
        print_value(e, shorten, f32);
    }
    if (shorten && n > SHORT_ARRAY)
        printf(", ... (%d values)", n);
    putchar(']');
}

/* Whether key's values are float32 by the typed metadata. */
static int is_f32(const cJSON *types, const char *key)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(types, key);
    return cJSON_IsString(t) && strstr(t->valuestring, "float32") != NULL;
}

/* The container's metadata and key types (NULL when untyped), parsed; {} when absent. */
static int load_meta(const posenc_container *c, cJSON **meta, cJSON **types)
{
    const char *mt = posenc_container_meta(c), *ty = posenc_container_meta_types(c);
    *meta = mt ? cJSON_Parse(mt) : cJSON_CreateObject();
    if (*meta && !cJSON_IsObject(*meta)) {
        cJSON_Delete(*meta);
        *meta = cJSON_CreateObject();
    }
    *types = ty ? cJSON_Parse(ty) : NULL;
    if (*meta && (!ty || *types))
        return 0;
    cJSON_Delete(*meta);
    cJSON_Delete(*types);
    *meta = *types = NULL;
    cmd_msg(CMD, "out of memory");
    return -1;
}

static int print_json(const char *path, const posenc_container *c, int meta_only)
{
    cJSON *root = cJSON_CreateObject(), *arrays = NULL, *meta = NULL, *types = NULL;
    if (!root)
        goto oom;
    if (!cJSON_AddStringToObject(root, "file", path) ||
        !cJSON_AddStringToObject(root, "format",
                                 posenc_format_name(posenc_container_format(c))))
        goto oom;
    if (!meta_only && !(arrays = cJSON_AddArrayToObject(root, "arrays")))
        goto oom;
    for (size_t i = 0; !meta_only && i < posenc_container_count(c); i++) {
        const posenc_array_info *a = posenc_container_array(c, i);
        uint64_t nbytes = 0;
        posenc_error err = { 0 };
        posenc_status st;
        const char *dt = array_dtype(c, i, &nbytes, &err, &st);
        if (st != POSENC_OK) {
            cJSON_Delete(root);
            return cmd_fail(CMD, &err);
        }
        int readable = 1;
        const char *native = posenc_container_array_type(c, i, NULL, &readable);
        int gguf = posenc_container_format(c) == POSENC_FMT_GGUF;
        cJSON *o = cJSON_CreateObject(), *sh = NULL;
        if (!o || !cJSON_AddItemToArray(arrays, o))
            goto oom;
        if (!cJSON_AddStringToObject(o, "name", a->name) ||
            !cJSON_AddStringToObject(o, "dtype", dt) ||
            !(sh = cJSON_AddArrayToObject(o, "shape")))
            goto oom;
        for (int d = 0; d < a->ndim; d++)
            if (!cJSON_AddItemToArray(sh, cJSON_CreateNumber((double)a->shape[d])))
                goto oom;
        if (!cJSON_AddNumberToObject(o, "bytes", (double)nbytes))
            goto oom;
        if (native && gguf && !cJSON_AddStringToObject(o, "ggml_type", native))
            goto oom;
        if (native && !readable && !cJSON_AddBoolToObject(o, "readable", 0))
            goto oom;
    }
    if (load_meta(c, &meta, &types) != 0) {
        cJSON_Delete(root); /* load_meta said why */
        return CMD_EXIT_ERROR;
    }
    if (types) {
        /* typed (GGUF) metadata goes out as the reader wrote it: cJSON would print 64-bit
         * integers and float32 values rounded to 15 digits */
        cJSON_Delete(meta);
        meta = NULL;
        if (!cJSON_AddRawToObject(root, "metadata", posenc_container_meta(c)) ||
            !cJSON_AddItemToObject(root, "metadata_types", types))
            goto oom;
        types = NULL;
    } else if (!cJSON_AddItemToObject(root, "metadata", meta)) {
        cJSON_Delete(meta);
        goto oom;
    }
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    if (!text) {
        cmd_msg(CMD, "out of memory");
        return CMD_EXIT_ERROR;
    }
    printf("%s\n", text);
    cJSON_free(text);
    return CMD_EXIT_OK;
oom:
    cJSON_Delete(types);
    cJSON_Delete(root);
    cmd_msg(CMD, "out of memory");
    return CMD_EXIT_ERROR;
}

/* `--meta`: key, type and value per line, aligned. */
static int print_meta(const posenc_container *c)
{
    cJSON *meta, *types;
    if (load_meta(c, &meta, &types) != 0)
        return CMD_EXIT_ERROR;
    int wkey = 3, wty = 4;
    for (const cJSON *it = meta->child; it; it = it->next) {
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(types, it->string);
        const char *ty = cJSON_IsString(t) ? t->valuestring : json_kind(it);
        if ((int)strlen(it->string) > wkey)
            wkey = (int)strlen(it->string);
        if ((int)strlen(ty) > wty)
            wty = (int)strlen(ty);
    }
    printf("%-*s  %-*s  %s\n", wkey, "key", wty, "type", "value");
    for (const cJSON *it = meta->child; it; it = it->next) {
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(types, it->string);
        printf("%-*s  %-*s  ", wkey, it->string, wty,
               cJSON_IsString(t) ? t->valuestring : json_kind(it));
        print_value(it, 1, is_f32(types, it->string));
        putchar('\n');
    }
    cJSON_Delete(meta);
    cJSON_Delete(types);
    return CMD_EXIT_OK;
}

static int print_text(const posenc_container *c)
{
    size_t n = posenc_container_count(c);
    int wname = 4, wdt = 5, wsh = 5;
    char sh[256];
    posenc_error err = { 0 };
    posenc_status st;
    uint64_t nbytes = 0;
    for (size_t i = 0; i < n; i++) {
        const posenc_array_info *a = posenc_container_array(c, i);
        int l = (int)strlen(a->name);
        if (l > wname)
            wname = l;
        const char *dt = array_dtype(c, i, &nbytes, &err, &st);
        if (st != POSENC_OK)
            return cmd_fail(CMD, &err);
        l = (int)strlen(dt);
        if (l > wdt)
            wdt = l;
        l = (int)strlen(posenc_shape_str(a->ndim, a->shape, sh, sizeof sh));
        if (l > wsh)
            wsh = l;
    }
    printf("%-*s  %-*s  %-*s  %s\n", wname, "name", wdt, "dtype", wsh, "shape", "bytes");
    for (size_t i = 0; i < n; i++) {
        const posenc_array_info *a = posenc_container_array(c, i);
        const char *dt = array_dtype(c, i, &nbytes, &err, &st);
        printf("%-*s  %-*s  %-*s  %" PRIu64 "\n", wname, a->name, wdt, dt, wsh,
               posenc_shape_str(a->ndim, a->shape, sh, sizeof sh), nbytes);
    }
    cJSON *meta, *types;
    if (load_meta(c, &meta, &types) != 0)
        return CMD_EXIT_ERROR;
    int typed = types != NULL; /* GGUF: vocabularies of 100k strings are shortened */
    if (meta->child) {
        printf("metadata:\n");
        for (const cJSON *it = meta->child; it; it = it->next) {
            printf("  %s: ", it->string);
            print_value(it, typed, is_f32(types, it->string));
            putchar('\n');
        }
    }
    cJSON_Delete(meta);
    cJSON_Delete(types);
    return CMD_EXIT_OK;
}

/* NPY arrays of the opaque type '<V2' are listed as such (a bfloat16 file from ml_dtypes, or
 * posenc's own bf16 .npy, looks the same), and one line says so rather than guessing. */
static void note_opaque(const char *path, const posenc_container *c)
{
    size_t n = 0, first = 0;
    if (posenc_container_format(c) == POSENC_FMT_GGUF) /* quantized: listed by their ggml_type */
        return;
    for (size_t i = 0; i < posenc_container_count(c); i++) {
        int readable = 1;
        if (posenc_container_array_type(c, i, NULL, &readable) && !readable && n++ == 0)
            first = i;
    }
    if (n == 1)
        cmd_msg(CMD, "'%s': array '%s' has the opaque NPY dtype '%s' (2-byte elements, "
                   "bfloat16 if ml_dtypes or posenc wrote it); pass --assume-bf16 to read it as "
                   "bf16", path, posenc_container_array(c, first)->name,
                   posenc_container_array_type(c, first, NULL, NULL));
    else if (n > 1)
        cmd_msg(CMD, "'%s': %zu arrays ('%s', ...) have the opaque NPY dtype '%s' (2-byte "
                   "elements, bfloat16 if ml_dtypes or posenc wrote them); pass --assume-bf16 to "
                   "read them as bf16", path, n, posenc_container_array(c, first)->name,
                   posenc_container_array_type(c, first, NULL, NULL));
}

enum { OPT_META = 256, OPT_DTYPE_BF16 };

static const struct cmd_opt ls_opts[] = {
    { .id = CMD_O_JSON,
      .help = "print {\"file\", \"format\", \"arrays\": [{\"name\", \"dtype\",\n"
              "\"shape\", \"bytes\"}], \"metadata\": {...}}" },
    { OPT_META, "meta", 0, NULL, CMD_T_FLAG, 0, 0,
      "list only the metadata: one line per key with its type\n"
      "(GGUF: uint32, array[string], ...) and value, long\n"
      "arrays shortened; with --json, the full values", NULL },
    { .id = CMD_O_ASSUME_BF16,
      .help = "read NPY void 2-byte arrays ('<V2', ml_dtypes) as bf16" },
    /* ls's --dtype never named an output dtype, only this reading rule: an alias of the one
     * flag the other commands spell --assume-bf16 */
    { OPT_DTYPE_BF16, "dtype", 0, "bf16", CMD_T_DTYPE, 0, 0,
      "deprecated alias of --assume-bf16", "--assume-bf16" },
    { .id = CMD_O_HELP },
    CMD_OPTS_END
};

const struct cmd_spec cmd_ls_spec = {
    "ls",
    "usage: posenc ls [--json] [--meta] [--assume-bf16] FILE\n"
    "\n"
    "List the arrays of FILE (NPY, NPZ, a directory of NPY files, HDF5, safetensors, GGUF\n"
    "or raw .bin + .json): name, dtype, shape and bytes, then the file's metadata.\n"
    "\n",
    27, ls_opts
};

int cmd_ls(int argc, char **argv)
{
    int json = 0, meta_only = 0, c;
    posenc_read_opts ro = { 0, POSENC_FMT_AUTO };
    posenc_error err = { 0 };

    struct cmd_parse p;
    cmd_opts_begin(&p, &cmd_ls_spec, argc, argv);
    while ((c = cmd_opts_next(&p)) > 0) {
        switch (c) {
        case CMD_O_JSON: json = 1; break;
        case OPT_META: meta_only = 1; break;
        case CMD_O_ASSUME_BF16: ro.assume_bf16 = 1; break;
        case OPT_DTYPE_BF16:
            if (p.dtype != POSENC_DT_BF16)
                return cmd_usage_error(CMD, "--dtype: only bf16 changes how files are read, "
                                               "not %s", posenc_dtype_name(p.dtype));
            ro.assume_bf16 = 1;
            break;
        }
    }
    if (c == CMD_OPTS_EXIT)
        return p.rc;
    if (p.optind >= argc)
        return cmd_usage_error(CMD, "missing FILE");
    if (p.optind + 1 < argc)
        return cmd_usage_error(CMD, "unexpected argument '%s' (one FILE at a time)",
                                  argv[p.optind + 1]);
    const char *path = argv[p.optind];
    posenc_container *ct = NULL;
    if (posenc_container_open(path, &ro, &ct, &err) != POSENC_OK)
        return cmd_fail(CMD, &err);
    note_opaque(path, ct);
    int rc = json ? print_json(path, ct, meta_only) : meta_only ? print_meta(ct) : print_text(ct);
    posenc_container_close(ct);
    return rc;
}

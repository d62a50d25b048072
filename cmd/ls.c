/* cmd/ls.c: `posenc ls FILE`: the arrays a file holds (name, dtype, shape, bytes) and its
 * metadata, as aligned text or as JSON. Reads headers only, never the data. */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "common.h"

#define CMD "ls"

static void usage(FILE *fp)
{
    fprintf(fp,
            "usage: posenc ls [--json] [--dtype bf16] FILE\n"
            "\n"
            "List the arrays of FILE (NPY, NPZ, a directory of NPY files, HDF5, safetensors or\n"
            "raw .bin + .json): name, dtype, shape and bytes, then the file's metadata.\n"
            "\n"
            "      --json               print {\"file\", \"format\", \"arrays\": [{\"name\", \"dtype\",\n"
            "                           \"shape\", \"bytes\"}], \"metadata\": {...}}\n"
            "      --dtype bf16         read NPY void 2-byte arrays ('<V2', ml_dtypes) as bf16\n"
            "  -h, --help               show this help\n");
}

static const struct option long_opts[] = {
    { "json", no_argument, NULL, 'j' },
    { "dtype", required_argument, NULL, 'd' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 }
};

static int print_json(const char *path, const posenc_container *c)
{
    cJSON *root = cJSON_CreateObject(), *arrays = NULL, *meta = NULL;
    int rc = POSENC_EXIT_ERROR;
    if (!root)
        goto oom;
    if (!cJSON_AddStringToObject(root, "file", path) ||
        !cJSON_AddStringToObject(root, "format",
                                 posenc_format_name(posenc_container_format(c))) ||
        !(arrays = cJSON_AddArrayToObject(root, "arrays")))
        goto oom;
    for (size_t i = 0; i < posenc_container_count(c); i++) {
        const posenc_array_info *a = posenc_container_array(c, i);
        uint64_t nbytes = 0;
        posenc_error err = { 0 };
        if (posenc_shape_size(a->ndim, a->shape, a->dtype, NULL, &nbytes, &err) != POSENC_OK) {
            cJSON_Delete(root);
            return posenc_fail(CMD, &err);
        }
        cJSON *o = cJSON_CreateObject(), *sh = NULL;
        if (!o || !cJSON_AddItemToArray(arrays, o))
            goto oom;
        if (!cJSON_AddStringToObject(o, "name", a->name) ||
            !cJSON_AddStringToObject(o, "dtype", posenc_dtype_name(a->dtype)) ||
            !(sh = cJSON_AddArrayToObject(o, "shape")))
            goto oom;
        for (int d = 0; d < a->ndim; d++)
            if (!cJSON_AddItemToArray(sh, cJSON_CreateNumber((double)a->shape[d])))
                goto oom;
        if (!cJSON_AddNumberToObject(o, "bytes", (double)nbytes))
            goto oom;
    }
    const char *mt = posenc_container_meta(c);
    meta = mt ? cJSON_Parse(mt) : cJSON_CreateObject();
    if (!meta || !cJSON_IsObject(meta)) {
        cJSON_Delete(meta);
        meta = cJSON_CreateObject();
        if (!meta)
            goto oom;
    }
    if (!cJSON_AddItemToObject(root, "metadata", meta)) {
        cJSON_Delete(meta);
        goto oom;
    }
    char *text = cJSON_Print(root);
    if (!text)
        goto oom;
    printf("%s\n", text);
    cJSON_free(text);
    rc = POSENC_EXIT_OK;
    cJSON_Delete(root);
    return rc;
oom:
    cJSON_Delete(root);
    posenc_msg(CMD, "out of memory");
    return POSENC_EXIT_ERROR;
}

static int print_text(const posenc_container *c)
{
    size_t n = posenc_container_count(c);
    int wname = 4, wdt = 5, wsh = 5;
    char sh[256];
    for (size_t i = 0; i < n; i++) {
        const posenc_array_info *a = posenc_container_array(c, i);
        int l = (int)strlen(a->name);
        if (l > wname)
            wname = l;
        l = (int)strlen(posenc_dtype_name(a->dtype));
        if (l > wdt)
            wdt = l;
        l = (int)strlen(posenc_shape_str(a->ndim, a->shape, sh, sizeof sh));
        if (l > wsh)
            wsh = l;
    }
    printf("%-*s  %-*s  %-*s  %s\n", wname, "name", wdt, "dtype", wsh, "shape", "bytes");
    for (size_t i = 0; i < n; i++) {
        const posenc_array_info *a = posenc_container_array(c, i);
        uint64_t nbytes = 0;
        posenc_error err = { 0 };
        if (posenc_shape_size(a->ndim, a->shape, a->dtype, NULL, &nbytes, &err) != POSENC_OK)
            return posenc_fail(CMD, &err);
        printf("%-*s  %-*s  %-*s  %" PRIu64 "\n", wname, a->name, wdt,
               posenc_dtype_name(a->dtype), wsh, posenc_shape_str(a->ndim, a->shape, sh, sizeof sh),
               nbytes);
    }
    const char *mt = posenc_container_meta(c);
    cJSON *meta = mt ? cJSON_Parse(mt) : NULL;
    if (cJSON_IsObject(meta) && meta->child) {
        printf("metadata:\n");
        for (const cJSON *it = meta->child; it; it = it->next) {
            char *v = cJSON_PrintUnformatted(it);
            printf("  %s: %s\n", it->string, v ? v : "?");
            cJSON_free(v);
        }
    }
    cJSON_Delete(meta);
    return POSENC_EXIT_OK;
}

int cmd_ls(int argc, char **argv)
{
    int json = 0, c;
    posenc_read_opts ro = { 0, POSENC_FMT_AUTO };
    posenc_error err = { 0 };

    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", long_opts, NULL)) != -1) {
        switch (c) {
        case 'h':
            usage(stdout);
            return POSENC_EXIT_OK;
        case 'j': json = 1; break;
        case 'd': {
            posenc_dtype dt;
            if (posenc_dtype_parse(optarg, &dt, &err) != POSENC_OK)
                return posenc_usage_error(CMD, "--dtype: %s", err.msg);
            if (dt != POSENC_DT_BF16)
                return posenc_usage_error(CMD, "--dtype: only bf16 changes how files are read, "
                                               "not %s", posenc_dtype_name(dt));
            ro.assume_bf16 = 1;
            break;
        }
        case ':':
            return posenc_usage_error(CMD, "option '%s' needs a value", argv[optind - 1]);
        default:
            if (optopt)
                return posenc_usage_error(CMD, "unknown option '-%c'", optopt);
            return posenc_usage_error(CMD, "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind >= argc)
        return posenc_usage_error(CMD, "missing FILE");
    if (optind + 1 < argc)
        return posenc_usage_error(CMD, "unexpected argument '%s' (one FILE at a time)",
                                  argv[optind + 1]);
    const char *path = argv[optind];
    posenc_container *ct = NULL;
    if (posenc_container_open(path, &ro, &ct, &err) != POSENC_OK)
        return posenc_fail(CMD, &err);
    int rc = json ? print_json(path, ct) : print_text(ct);
    posenc_container_close(ct);
    return rc;
}

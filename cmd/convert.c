/* cmd/convert.c: `posenc convert IN OUT`: copy every array of IN (or the one named by
 * IN:MEMBER) to OUT in any writable format, optionally changing the float dtype. The arrays
 * are a table source (formats/io/out.c pe_out_container_table) streamed in 4 MiB chunks through
 * gen's output pipeline, so memory stays small whatever their size; metadata is carried over;
 * OUT appears only when complete. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "cmd/common.h"
#include "cmd/opts.h"
#include "formats/io/out.h"

#define CMD "convert"
/* Carry the container's metadata (a JSON object) over to the writer, key by key. */
static posenc_status copy_meta(void *ctx, posenc_writer *w, posenc_error *err)
{
    const char *mt = posenc_container_meta(ctx);
    if (!mt)
        return POSENC_OK;
    cJSON *root = cJSON_Parse(mt);
    posenc_status st = POSENC_OK;
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return POSENC_OK; /* not an object: nothing a writer could take key by key */
    }
    for (const cJSON *it = root->child; it && st == POSENC_OK; it = it->next) {
        char *v = cJSON_PrintUnformatted(it);
        if (!v) {
            st = posenc_seterr(err, POSENC_ENOMEM, "out of memory");
            break;
        }
        st = posenc_writer_meta(w, it->string, v, err);
        cJSON_free(v);
    }
    cJSON_Delete(root);
    return st;
}

static const struct cmd_opt convert_opts[] = {
    { .id = CMD_O_DTYPE,
      .help = "f32, f64, f16 or bf16: convert floating-point arrays\n"
              "(rounding to nearest even; NaN and Inf are kept); integer\n"
              "arrays keep their type (default: keep every dtype)" },
    { .id = CMD_O_FORMAT },
    { .id = CMD_O_COMPRESS },
    { .id = CMD_O_ASSUME_BF16,
      .help = "read NPY void 2-byte arrays ('<V2', ml_dtypes) as bf16" },
    { .id = CMD_O_FORCE, .help = "write more than 4 GiB (the declared shapes decide)" },
    { .id = CMD_O_QUIET },
    { .id = CMD_O_HELP },
    CMD_OPTS_END
};

const struct cmd_spec cmd_convert_spec = {
    "convert",
    "usage: posenc convert [options] IN OUT\n"
    "\n"
    "Copy the arrays of IN to OUT in another format or dtype. IN is any readable file\n"
    "(NPY, NPZ, a directory of NPY files, HDF5, safetensors, raw .bin + .json, GGUF);\n"
    "IN:MEMBER (file.npz:cos, file.h5:/a/b, m.safetensors:name) copies one array. OUT is\n"
    "NPY, NPZ, a directory (OUT/), HDF5, safetensors, a C header, raw or GGUF, by its\n"
    "name or --format;\n"
    "- writes one array as NPY on stdout. Metadata is carried over.\n"
    "\n",
    27, convert_opts
};

int cmd_convert(int argc, char **argv)
{
    posenc_read_opts ro = { 0, POSENC_FMT_AUTO };
    posenc_write_opts wo = { POSENC_FMT_AUTO, 0 };
    posenc_dtype out_dt = POSENC_DT_F32;
    int dtype_set = 0, force = 0, c, rc = CMD_EXIT_ERROR;
    posenc_error err = { 0 };

    struct cmd_parse p;
    cmd_opts_begin(&p, &cmd_convert_spec, argc, argv);
    while ((c = cmd_opts_next(&p)) > 0) {
        switch (c) {
        case CMD_O_DTYPE:
            out_dt = p.dtype;
            if (!posenc_dtype_is_float(out_dt))
                return cmd_usage_error(CMD, "--dtype: convert changes floating-point arrays "
                                               "only (f32, f64, f16 or bf16), not %s",
                                          posenc_dtype_name(out_dt));
            dtype_set = 1;
            break;
        case CMD_O_FORMAT: wo.format = p.format; break;
        case CMD_O_COMPRESS: wo.compress = 1; break;
        case CMD_O_ASSUME_BF16: ro.assume_bf16 = 1; break;
        case CMD_O_FORCE: force = 1; break;
        case CMD_O_QUIET: cmd_progress_quiet(); break;
        }
    }
    if (c == CMD_OPTS_EXIT)
        return p.rc;
    if (argc - p.optind < 2)
        return cmd_usage_error(CMD, "missing %s", argc - p.optind == 0 ? "IN and OUT" : "OUT");
    if (argc - p.optind > 2)
        return cmd_usage_error(CMD, "unexpected argument '%s'", argv[p.optind + 2]);
    const char *in = argv[p.optind], *out = argv[p.optind + 1];

    char path[4096], member[POSENC_NAME_MAX * 4];
    if (posenc_spec_split(in, path, sizeof path, member, sizeof member, &err) != POSENC_OK)
        return cmd_fail(CMD, &err);
    if (wo.format == POSENC_FMT_AUTO) {
        wo.format = posenc_format_guess(out);
        if (wo.format == POSENC_FMT_AUTO)
            return cmd_usage_error(CMD, "'%s': cannot tell the output format from the name; "
                                           "pass --format or end it in .npz, .npy, .h5, "
                                           ".hdf5, .safetensors, .h, .bin, .gguf or /", out);
    }
    if (strcmp(out, "-") == 0 && !posenc_format_to_stdout(wo.format))
        return cmd_usage_error(CMD, "- writes NPY only, not %s", posenc_format_name(wo.format));
    {
        const char *ins[] = { path }, *outs[] = { out };
        int crc = cmd_check_outputs(CMD, outs, 1, ins, 1);
        if (crc)
            return crc;
    }

    posenc_container *ct = NULL;
    pe_table t = { 0 };
    size_t first = 0, count = 0;

    if (posenc_container_open(path, &ro, &ct, &err) != POSENC_OK)
        return cmd_fail(CMD, &err);
    count = posenc_container_count(ct);
    if (member[0]) {
        /* one array, by name (HDF5 paths may be given with or without the leading '/') */
        size_t i;
        for (i = 0; i < count; i++) {
            const char *nm = posenc_container_array(ct, i)->name;
            if (strcmp(nm, member) == 0 ||
                (member[0] == '/' && strcmp(nm, member + 1) == 0) ||
                (nm[0] == '/' && strcmp(nm + 1, member) == 0))
                break;
        }
        if (i == count) {
            cmd_msg(CMD, "'%s': no array '%s'", path, member);
            goto out;
        }
        first = i;
        count = 1;
    }
    if (count == 0) {
        cmd_msg(CMD, "'%s': holds no arrays", path);
        goto out;
    }
    if (posenc_format_one_array(wo.format) && count > 1) {
        rc = cmd_usage_error(CMD, "'%s' holds %zu arrays and NPY holds one: name one as "
                                     "%s:NAME or write a container", path, count, path);
        goto out;
    }
    /* the output size from the declared shapes, before anything is written: a small file
     * that declares a huge array (an HDF5 header, a zip bomb) is refused here */
    if (pe_out_container_table(&t, ct, first, count, dtype_set, out_dt, &err) != POSENC_OK) {
        rc = cmd_fail(CMD, &err);
        goto out;
    }
    pe_out o = { out, wo, &t, NULL, PE_OUT_SIZE_LIMIT, force, 0, 0, 0, 0 };
    /* over the size limit, the run refuses in the pipeline's words (pe_out_limit_message) */
    if (pe_out_plan(&o, &err) != POSENC_OK || pe_out_run(&o, copy_meta, ct, &err) != POSENC_OK) {
        rc = cmd_fail(CMD, &err);
        goto out;
    }
    rc = CMD_EXIT_OK;
out:
    pe_table_free(&t);
    posenc_container_close(ct);
    return rc;
}

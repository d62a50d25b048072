/* cmd/convert.c: `posenc convert IN OUT`: copy every array of IN (or the one named by
 * IN:MEMBER) to OUT in any writable format, optionally changing the float dtype. Streams in
 * chunks of CHUNK_BYTES, so memory stays small whatever the size of the arrays; metadata is
 * carried over; OUT appears only when complete. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "common.h"
#include "opts.h"

#define CMD "convert"
#define CHUNK_BYTES ((size_t)4 << 20)

#define CONVERT_SIZE_LIMIT ((uint64_t)4 << 30) /* bytes of output without --force */

/* Copy one array from r to w, converting floats to out_dt (or keeping the dtype when
 * keep is set). buf/cbuf are CHUNK_BYTES each. */
static posenc_status copy_array(posenc_reader *r, posenc_writer *w, posenc_dtype out_dt,
                                void *buf, void *cbuf, posenc_error *err)
{
    const posenc_array_info *in = posenc_reader_info(r);
    uint64_t nelem;
    posenc_status st = posenc_shape_size(in->ndim, in->shape, in->dtype, &nelem, NULL, err);
    if (st != POSENC_OK)
        return st;
    size_t is = posenc_dtype_size(in->dtype), os = posenc_dtype_size(out_dt);
    size_t per = CHUNK_BYTES / (is > os ? is : os);
    while (nelem > 0) {
        size_t k = nelem < per ? (size_t)nelem : per;
        if ((st = posenc_reader_read(r, buf, k, err)) != POSENC_OK)
            return st;
        const void *src = buf;
        if (out_dt != in->dtype) {
            posenc_dtype_convert(cbuf, out_dt, buf, in->dtype, k);
            src = cbuf;
        }
        if ((st = posenc_writer_write(w, src, k, err)) != POSENC_OK)
            return st;
        nelem -= k;
    }
    return POSENC_OK;
}

/* Carry the container's metadata (a JSON object) over to the writer, key by key. */
static posenc_status copy_meta(const posenc_container *c, posenc_writer *w, posenc_error *err)
{
    const char *mt = posenc_container_meta(c);
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
                                           ".safetensors, .h, .bin or /", out);
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
    posenc_writer *w = NULL;
    void *buf = NULL, *cbuf = NULL;
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
    {
        /* the output size from the declared shapes, before anything is written: a small file
         * that declares a huge array (an HDF5 header, a zip bomb) is refused here */
        uint64_t total = 0;
        for (size_t i = first; i < first + count; i++) {
            const posenc_array_info *a = posenc_container_array(ct, i);
            posenc_dtype dt = dtype_set && posenc_dtype_is_float(a->dtype) ? out_dt : a->dtype;
            uint64_t nelem, nbytes;
            if (posenc_shape_size(a->ndim, a->shape, dt, &nelem, &nbytes, &err) != POSENC_OK) {
                rc = cmd_fail(CMD, &err);
                goto out;
            }
            total = total + nbytes < total ? UINT64_MAX : total + nbytes;
        }
        if (total > CONVERT_SIZE_LIMIT && !force) {
            cmd_msg(CMD, "'%s': the output would be %.1f GiB, over the 4 GiB limit; pass "
                            "--force", out, (double)total / (double)((uint64_t)1 << 30));
            goto out;
        }
    }
    buf = malloc(CHUNK_BYTES);
    cbuf = malloc(CHUNK_BYTES);
    if (!buf || !cbuf) {
        cmd_msg(CMD, "out of memory");
        goto out;
    }
    if (posenc_writer_open(out, &wo, &w, &err) != POSENC_OK) {
        rc = cmd_fail(CMD, &err);
        goto out;
    }
    if (copy_meta(ct, w, &err) != POSENC_OK)
        goto fail;
    for (size_t i = first; i < first + count; i++) {
        posenc_array_info a = *posenc_container_array(ct, i);
        /* HDF5 lists "/x": other formats (and HDF5 itself) take the name without the root */
        if (a.name[0] == '/' && a.name[1])
            memmove(a.name, a.name + 1, strlen(a.name));
        if (dtype_set && posenc_dtype_is_float(a.dtype))
            a.dtype = out_dt;
        if (posenc_writer_declare(w, &a, &err) != POSENC_OK)
            goto fail;
    }
    for (size_t i = first; i < first + count; i++) {
        posenc_reader *r = NULL;
        const posenc_array_info *a = posenc_container_array(ct, i);
        posenc_dtype dt = dtype_set && posenc_dtype_is_float(a->dtype) ? out_dt : a->dtype;
        if (posenc_reader_open_index(ct, i, &r, &err) != POSENC_OK)
            goto fail;
        posenc_status st = copy_array(r, w, dt, buf, cbuf, &err);
        posenc_reader_close(r);
        if (st != POSENC_OK)
            goto fail;
    }
    if (posenc_writer_commit(w, &err) != POSENC_OK) {
        w = NULL;
        rc = cmd_fail(CMD, &err);
        goto out;
    }
    w = NULL;
    rc = CMD_EXIT_OK;
    goto out;
fail:
    rc = cmd_fail(CMD, &err);
    posenc_writer_abort(w);
    w = NULL;
out:
    free(buf);
    free(cbuf);
    posenc_container_close(ct);
    return rc;
}

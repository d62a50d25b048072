/* registry.c: what posenc knows about each file format, in one table: its names for --format, its
 * extensions, how its first bytes look, whether FILE:MEMBER names an array inside, whether it can
 * be written to standard output, whether its library may run beside other threads, and the
 * backend that reads and writes it. Guessing a format from a name or from the bytes, and
 * splitting FILE:MEMBER specs, read this table and nothing else. */
#include <errno.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "formats/io/backend.h"

static int probe_npy(const unsigned char *m, size_t n)
{
    return n >= 6 && memcmp(m, "\x93NUMPY", 6) == 0;
}

static int probe_npz(const unsigned char *m, size_t n)
{
    /* a local file header, or the end record of an empty archive */
    return n >= 4 && (memcmp(m, "PK\x03\x04", 4) == 0 || memcmp(m, "PK\x05\x06", 4) == 0);
}

static int probe_gguf(const unsigned char *m, size_t n)
{
    return n >= 4 && memcmp(m, "GGUF", 4) == 0;
}

static int probe_hdf5(const unsigned char *m, size_t n)
{
    return n >= 8 && memcmp(m, "\x89HDF\r\n\x1a\n", 8) == 0;
}

static int probe_safetensors(const unsigned char *m, size_t n)
{
    /* an 8-byte little-endian header length below 2^48, then the JSON header's '{' */
    return n >= 9 && m[8] == '{' && m[6] == 0 && m[7] == 0;
}

typedef struct format_desc {
    posenc_format fmt;
    const char *name;          /* posenc_format_name */
    const char *alias;         /* another --format name, or NULL */
    const char *exts[4];       /* extensions, case-insensitive; NULL-terminated */
    int (*probe)(const unsigned char *head, size_t n); /* NULL: no magic bytes */
    unsigned members : 1;      /* FILE:MEMBER names an array inside the file */
    unsigned one_array : 1;    /* the file holds exactly one array */
    unsigned to_stdout : 1;    /* "-" may name it as output (one array) and input */
    unsigned thread_safe : 1;  /* its library may be called beside other threads */
    const pe_backend *be;
} format_desc;

/* Probe order matters only where magics could overlap; safetensors' test is the loosest. */
static const format_desc formats[] = {
    { POSENC_FMT_NPY, "npy", NULL, { ".npy" }, probe_npy, 0, 1, 1, 1, &pe_backend_npy },
    { POSENC_FMT_NPZ, "npz", NULL, { ".npz" }, probe_npz, 1, 0, 0, 1, &pe_backend_npz },
    { POSENC_FMT_GGUF, "gguf", NULL, { ".gguf" }, probe_gguf, 1, 0, 0, 1, &pe_backend_gguf },
    /* libhdf5 as Debian builds it is not thread-safe (H5_HAVE_THREADSAFE off) */
    { POSENC_FMT_HDF5, "hdf5", "h5", { ".h5", ".hdf5", ".hdf" }, probe_hdf5, 1, 0, 0, 0,
      &pe_backend_hdf5 },
    { POSENC_FMT_SAFETENSORS, "safetensors", NULL, { ".safetensors" }, probe_safetensors, 1, 0, 0, 1,
      &pe_backend_safetensors },
    { POSENC_FMT_DIR, "dir", NULL, { NULL }, NULL, 0, 0, 0, 1, &pe_backend_dir },
    { POSENC_FMT_CHEADER, "header", "h", { ".h" }, NULL, 0, 0, 0, 1, &pe_backend_cheader },
    /* raw has no magic: a .bin data file or its .json sidecar */
    { POSENC_FMT_RAW, "raw", "bin", { ".bin", ".json" }, NULL, 1, 0, 0, 1, &pe_backend_raw },
};
#define N_FORMATS (sizeof formats / sizeof formats[0])

static const format_desc *desc_of(posenc_format f)
{
    for (size_t i = 0; i < N_FORMATS; i++)
        if (formats[i].fmt == f)
            return &formats[i];
    return NULL;
}

const pe_backend *pe_backend_for(posenc_format f)
{
    const format_desc *d = desc_of(f);
    return d ? d->be : NULL;
}

/* The formats' names, comma separated and `last` before the final one; files_only: only the
 * formats a file can be read as (a reader, not a directory). */
static void names_of(char *buf, size_t n, int files_only, const char *last)
{
    const format_desc *pick[N_FORMATS];
    size_t k = 0, used = 0;
    for (size_t i = 0; i < N_FORMATS; i++)
        if (!files_only || (formats[i].be->open && formats[i].fmt != POSENC_FMT_DIR))
            pick[k++] = &formats[i];
    buf[0] = '\0';
    for (size_t i = 0; i < k && used < n; i++) {
        int w = snprintf(buf + used, n - used, "%s%s", i ? (i + 1 < k ? ", " : last) : "",
                         pick[i]->name);
        if (w < 0)
            break;
        used += (size_t)w;
    }
}

posenc_status posenc_format_parse(const char *s, posenc_format *out, posenc_error *err)
{
    for (size_t i = 0; i < N_FORMATS; i++) {
        const format_desc *d = &formats[i];
        if (strcmp(s, d->name) == 0 || (d->alias && strcmp(s, d->alias) == 0)) {
            *out = d->fmt;
            return POSENC_OK;
        }
    }
    char list[160];
    names_of(list, sizeof list, 0, " or ");
    return posenc_seterr(err, POSENC_EINVAL, "unknown format '%s' (expected %s)", s, list);
}

const char *posenc_format_name(posenc_format f)
{
    const format_desc *d = desc_of(f);
    return d ? d->name : "auto";
}

int posenc_format_thread_safe(posenc_format f)
{
    const format_desc *d = desc_of(f);
    return d ? d->thread_safe : 1;
}

int posenc_format_one_array(posenc_format f)
{
    const format_desc *d = desc_of(f);
    return d && d->one_array;
}

int posenc_format_to_stdout(posenc_format f)
{
    const format_desc *d = desc_of(f);
    return d && d->to_stdout;
}

/* The format whose extension ends the first len bytes of path, or AUTO. The sidecar extension
 * .json counts only where asked (a .json file is not output of any format). */
static posenc_format by_ext(const char *path, size_t len, int with_json)
{
    for (size_t i = 0; i < N_FORMATS; i++)
        for (int e = 0; e < 4 && formats[i].exts[e]; e++) {
            const char *x = formats[i].exts[e];
            size_t el = strlen(x);
            if (!with_json && strcmp(x, ".json") == 0)
                continue;
            if (len > el && strncasecmp(path + len - el, x, el) == 0)
                return formats[i].fmt;
        }
    return POSENC_FMT_AUTO;
}

posenc_format posenc_format_guess(const char *path)
{
    size_t len = strlen(path);
    if (strcmp(path, "-") == 0)
        return POSENC_FMT_NPY;
    if (len > 0 && path[len - 1] == '/')
        return POSENC_FMT_DIR;
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return POSENC_FMT_DIR;
    return by_ext(path, len, 0);
}

posenc_status pe_format_sniff(const char *path, posenc_format *out, posenc_error *err)
{
    if (strcmp(path, "-") == 0) {
        *out = POSENC_FMT_NPY;
        return POSENC_OK;
    }
    struct stat st;
    if (stat(path, &st) != 0)
        return posenc_seterr(err, POSENC_EIO, "cannot open '%s': %s", path, strerror(errno));
    if (S_ISDIR(st.st_mode)) {
        *out = POSENC_FMT_DIR;
        return POSENC_OK;
    }
    if (!S_ISREG(st.st_mode)) {
        /* a pipe or device cannot be peeked at without consuming it: go by the name */
        posenc_format g = posenc_format_guess(path);
        *out = g == POSENC_FMT_AUTO ? POSENC_FMT_NPY : g;
        return POSENC_OK;
    }
    unsigned char m[16] = { 0 };
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return posenc_seterr(err, POSENC_EIO, "cannot open '%s': %s", path, strerror(errno));
    size_t got = fread(m, 1, sizeof m, fp);
    fclose(fp);
    for (size_t i = 0; i < N_FORMATS; i++)
        if (formats[i].probe && formats[i].probe(m, got)) {
            *out = formats[i].fmt;
            return POSENC_OK;
        }
    posenc_format g = by_ext(path, strlen(path), 1);
    if (g == POSENC_FMT_AUTO || !pe_backend_for(g)->open) {
        char list[160];
        names_of(list, sizeof list, 1, ", ");
        return posenc_seterr(err, POSENC_EFORMAT, "'%s': unknown file format (not %s)", path,
                             list);
    }
    *out = g; /* no magic: the backend will say what is wrong with it */
    return POSENC_OK;
}

posenc_status posenc_spec_split(const char *spec, char *path, size_t path_len, char *member,
                                size_t member_len, posenc_error *err)
{
    size_t len = strlen(spec);
    /* the last ':' that follows the extension of a format with members splits path from member */
    for (size_t i = len; i-- > 0;) {
        if (spec[i] != ':')
            continue;
        const format_desc *d = desc_of(by_ext(spec, i, 0));
        if (d && d->members) {
            if (i >= path_len || len - i - 1 >= member_len)
                return posenc_seterr(err, POSENC_EINVAL, "'%s': name too long", spec);
            memcpy(path, spec, i);
            path[i] = '\0';
            memcpy(member, spec + i + 1, len - i);
            return POSENC_OK;
        }
    }
    if (len >= path_len)
        return posenc_seterr(err, POSENC_EINVAL, "'%.64s...': name too long", spec);
    memcpy(path, spec, len + 1);
    if (member_len)
        member[0] = '\0';
    return POSENC_OK;
}

/* dir.c: a directory of NAME.npy files plus meta.json. Reading lists the .npy files (sorted by
 * name); writing puts each file in a temporary beside its target and commits them as one unit
 * (pe_tmp_group_begin): every file replaced, or none, and the old ones kept. */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "formats/io/backend.h"
#include "formats/io/jsondup.h"
#include "formats/files/npyfmt.h"

#define META_NAME "meta.json"
#define DIR_MAX_FILES 65536

static char *join(const char *dir, const char *name, const char *ext)
{
    size_t dl = strlen(dir), nl = strlen(name), el = strlen(ext);
    while (dl > 1 && dir[dl - 1] == '/')
        dl--;
    char *p = malloc(dl + 1 + nl + el + 1);
    if (!p)
        return NULL;
    memcpy(p, dir, dl);
    p[dl] = '/';
    memcpy(p + dl + 1, name, nl);
    memcpy(p + dl + 1 + nl, ext, el + 1);
    return p;
}

struct dir_cont {
    pe_npy_header *h;
};

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static posenc_status read_meta(posenc_container *c, posenc_error *err)
{
    char *path = join(c->path, META_NAME, "");
    if (!path)
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    FILE *fp = NULL;
    posenc_status st = POSENC_OK;
    char *text = NULL;
    struct stat ls;
    if (stat(path, &ls) != 0) {
        if (errno != ENOENT)
            st = posenc_seterr(err, POSENC_EIO, "cannot open '%s': %s", path, strerror(errno));
        goto out;
    }
    if ((st = pe_open_input(path, 1, &fp, err)) != POSENC_OK)
        goto out;
    size_t n;
    if ((st = pe_meta_read(fp, path, "meta.json", &text, &n, err)) != POSENC_OK)
        goto out;
    cJSON *root = memchr(text, '\0', n) ? NULL : cJSON_ParseWithOpts(text, NULL, 1);
    int ok = cJSON_IsObject(root);
    cJSON_Delete(root);
    if (!ok) {
        st = posenc_seterr(err, POSENC_EFORMAT, "'%s': not a JSON object", path);
        goto out;
    }
    c->meta = text;
    text = NULL;
out:
    if (fp)
        fclose(fp);
    free(text);
    free(path);
    return st;
}

static void dir_close(posenc_container *c)
{
    struct dir_cont *k = c->impl;
    if (!k)
        return;
    free(k->h);
    free(k);
    c->impl = NULL;
}

static posenc_status dir_open(posenc_container *c, posenc_error *err)
{
    struct dir_cont *k = calloc(1, sizeof *k);
    if (!k)
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    c->impl = k;
    posenc_status st;
    if ((st = read_meta(c, err)))
        return st;
    DIR *d = opendir(c->path);
    if (!d)
        return posenc_seterr(err, POSENC_EIO, "cannot open '%s': %s", c->path, strerror(errno));
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t len = strlen(de->d_name);
        if (de->d_name[0] == '.' || len <= 4 || strcmp(de->d_name + len - 4, ".npy") != 0)
            continue;
        if (len - 4 >= POSENC_NAME_MAX)
            continue;
        if (n == DIR_MAX_FILES) {
            st = posenc_seterr(err, POSENC_ERANGE, "'%s': more than %d .npy files", c->path,
                               DIR_MAX_FILES);
            break;
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            char **nn = realloc(names, cap * sizeof *nn);
            if (!nn) {
                st = posenc_seterr(err, POSENC_ENOMEM, "out of memory");
                break;
            }
            names = nn;
        }
        if (!(names[n] = strdup(de->d_name))) {
            st = posenc_seterr(err, POSENC_ENOMEM, "out of memory");
            break;
        }
        n++;
    }
    closedir(d);
    /* a directory of arrays has .npy files or posenc's meta.json; /etc has neither */
    if (!st && n == 0 && !c->meta)
        st = posenc_seterr(err, POSENC_EFORMAT, "'%s': a directory without .npy files or "
                           "meta.json, not a directory of arrays", c->path);
    if (!st && n > 1)
        qsort(names, n, sizeof *names, cmp_str);
    if (!st) {
        k->h = calloc(n ? n : 1, sizeof *k->h);
        c->arrays = calloc(n ? n : 1, sizeof *c->arrays);
        if (!k->h || !c->arrays)
            st = posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    }
    cJSON *meta = c->meta ? cJSON_Parse(c->meta) : NULL;
    for (size_t i = 0; i < n && !st; i++) {
        char stem[POSENC_NAME_MAX];
        size_t sl = strlen(names[i]) - 4;
        memcpy(stem, names[i], sl);
        stem[sl] = '\0';
        int bf16 = c->opts.assume_bf16 || pe_npy_dtypes_bf16(meta, stem);
        char *path = join(c->path, names[i], "");
        if (!path) {
            st = posenc_seterr(err, POSENC_ENOMEM, "out of memory");
            break;
        }
        FILE *fp;
        int regular;
        struct stat ms;
        if (stat(path, &ms) == 0 && !S_ISREG(ms.st_mode)) {
            /* open(2) would wait forever for a FIFO's writer */
            st = posenc_seterr(err, POSENC_EFORMAT, "'%s': not a regular file", path);
            free(path);
            break;
        }
        st = pe_npy_open_file(path, bf16, &k->h[i], &fp, &regular, err);
        free(path);
        if (st)
            break;
        fclose(fp);
        c->arrays[i] = k->h[i].info;
        memcpy(c->arrays[i].name, stem, sl + 1);
        c->n = i + 1;
    }
    cJSON_Delete(meta);
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return st;
}

static posenc_status dir_reader_open(posenc_reader *r, posenc_error *err)
{
    struct dir_cont *k = r->c->impl;
    char *path = join(r->c->path, r->info.name, ".npy");
    if (!path)
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    pe_npy_freader *fr;
    /* the reader keeps path for its messages: hand it over with the reader */
    posenc_status st = pe_npy_readable(&k->h[r->index], path, err);
    if (!st)
        st = pe_npy_freader_new(path, NULL, &k->h[r->index], &fr, err);
    if (st) {
        free(path);
        return st;
    }
    r->impl = fr;
    fr->src.path = path;
    fr->d.path = path;
    return POSENC_OK;
}

static posenc_status dir_read(posenc_reader *r, void *buf, uint64_t nelem, posenc_error *err)
{
    pe_npy_freader *fr = r->impl;
    return pe_npy_data_read(&fr->d, buf, nelem, err);
}

static void dir_reader_close(posenc_reader *r)
{
    pe_npy_freader *fr = r->impl;
    if (!fr)
        return;
    char *path = (char *)fr->src.path;
    pe_npy_freader_free(fr);
    free(path);
    r->impl = NULL;
}

/* ---- writer ---- */

struct dir_file {
    char *final;
    char *tmp;
};

struct dir_writer {
    int created_dir;
    size_t nf;
    struct dir_file *f;         /* one per array, then meta.json */
    FILE *fp;                   /* the file being written */
    char *vbuf;
    size_t begun;
    pe_writeout wo;             /* of the file being written */
};

static void dir_w_free(posenc_writer *w, int remove_all)
{
    struct dir_writer *k = w->impl;
    if (!k)
        return;
    if (k->fp)
        fclose(k->fp);
    for (size_t i = 0; i < k->nf; i++) {
        if (remove_all) {
            if (k->f[i].tmp)
                unlink(k->f[i].tmp);
        }
        free(k->f[i].final);
        free(k->f[i].tmp);
    }
    if (remove_all && k->created_dir)
        rmdir(w->path);
    free(k->f);
    free(k->vbuf);
    free(k);
    w->impl = NULL;
}

static posenc_status dir_w_start(posenc_writer *w, posenc_error *err)
{
    for (size_t i = 0; i < w->n; i++) {
        const char *nm = w->arrays[i].name;
        if (strchr(nm, '/') || strcmp(nm, ".") == 0 || strcmp(nm, "..") == 0 ||
            strlen(nm) + 4 > 255)
            return posenc_seterr(err, POSENC_EINVAL,
                                 "'%s': array name '%s' cannot be a file name", w->path, nm);
    }
    struct dir_writer *k = calloc(1, sizeof *k);
    if (!k)
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    w->impl = k;
    struct stat sb;
    if (stat(w->path, &sb) == 0) {
        if (!S_ISDIR(sb.st_mode)) {
            dir_w_free(w, 0);
            return posenc_seterr(err, POSENC_EINVAL, "'%s': exists and is not a directory",
                                 w->path);
        }
    } else if (mkdir(w->path, 0777) == 0) {
        k->created_dir = 1;
    } else {
        int e = errno;
        dir_w_free(w, 0);
        return posenc_seterr(err, POSENC_EIO, "cannot create directory '%s': %s", w->path,
                             strerror(e));
    }
    k->f = calloc(w->n + 1, sizeof *k->f);
    if (!k->f) {
        dir_w_free(w, 1);
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    }
    k->nf = w->n + 1;
    for (size_t i = 0; i <= w->n; i++) {
        k->f[i].final = i < w->n ? join(w->path, w->arrays[i].name, ".npy")
                                 : join(w->path, META_NAME, "");
        if (!k->f[i].final) {
            dir_w_free(w, 1);
            return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
        }
    }
    k->vbuf = malloc(PE_IO_BUFSIZE);
    return POSENC_OK;
}

/* Close the file being written, checking for write errors. */
static posenc_status close_current(posenc_writer *w, size_t i, posenc_error *err)
{
    struct dir_writer *k = w->impl;
    if (!k->fp)
        return POSENC_OK;
    FILE *fp = k->fp;
    k->fp = NULL;
    int bad = fflush(fp) != 0 || ferror(fp);
    int e = errno;
    if (fclose(fp) != 0 && !bad) {
        bad = 1;
        e = errno;
    }
    if (bad)
        return posenc_seterr(err, POSENC_EIO, "cannot write '%s': %s", k->f[i].final,
                             strerror(e ? e : EIO));
    return POSENC_OK;
}

static posenc_status open_file(posenc_writer *w, size_t i, posenc_error *err)
{
    struct dir_writer *k = w->impl;
    posenc_status st = pe_tmp_create(k->f[i].final, &k->f[i].tmp, &k->fp, err);
    if (st)
        return st;
    if (k->vbuf)
        setvbuf(k->fp, k->vbuf, _IOFBF, PE_IO_BUFSIZE);
    k->wo.pending = 0;
    return POSENC_OK;
}

static posenc_status begin_upto(posenc_writer *w, size_t upto, posenc_error *err)
{
    struct dir_writer *k = w->impl;
    posenc_status st;
    while (k->begun <= upto) {
        if (k->begun > 0 && (st = close_current(w, k->begun - 1, err)))
            return st;
        size_t i = k->begun;
        if ((st = open_file(w, i, err)))
            return st;
        k->begun++;
        unsigned char hdr[PE_NPY_HEADER_CAP];
        size_t hl = pe_npy_header_format(&w->arrays[i], hdr);
        if ((st = pe_write_exact(k->fp, hdr, hl, k->f[i].final, err)))
            return st;
    }
    return POSENC_OK;
}

static posenc_status dir_w_write(posenc_writer *w, const void *data, uint64_t nelem,
                                 posenc_error *err)
{
    struct dir_writer *k = w->impl;
    posenc_status st = begin_upto(w, w->cur, err);
    if (st)
        return st;
    size_t nb = (size_t)(nelem * posenc_dtype_size(w->arrays[w->cur].dtype));
    st = pe_write_exact(k->fp, data, nb, k->f[w->cur].final, err);
    if (st == POSENC_OK && k->f[w->cur].tmp)
        pe_tmp_writeout(k->fp, &k->wo, nb);
    return st;
}

static posenc_status dir_w_commit(posenc_writer *w, posenc_error *err)
{
    struct dir_writer *k = w->impl;
    posenc_status st = w->n ? begin_upto(w, w->n - 1, err) : POSENC_OK;
    if (!st && k->begun)
        st = close_current(w, k->begun - 1, err);
    if (!st) {
        /* meta.json, with "posenc_dtypes" naming bf16 arrays as in NPZ */
        char *base = pe_writer_meta_json(w);
        cJSON *root = base ? cJSON_Parse(base) : NULL;
        free(base);
        cJSON *dts = NULL;
        for (size_t i = 0; root && i < w->n; i++)
            if (w->arrays[i].dtype == POSENC_DT_BF16) {
                if (!dts) {
                    cJSON_DeleteItemFromObjectCaseSensitive(root, "posenc_dtypes");
                    dts = cJSON_AddObjectToObject(root, "posenc_dtypes");
                }
                if (dts)
                    cJSON_AddStringToObject(dts, w->arrays[i].name, "bf16");
            }
        char *text = root ? cJSON_PrintUnformatted(root) : NULL;
        cJSON_Delete(root);
        if (!text)
            st = posenc_seterr(err, POSENC_ENOMEM, "out of memory");
        if (!st)
            st = open_file(w, w->n, err);
        if (!st)
            st = pe_write_exact(k->fp, text, strlen(text), k->f[w->n].final, err);
        if (!st)
            st = close_current(w, w->n, err);
        free(text);
    }
    /* every member and meta.json replaced as one unit, or none */
    if (!st) {
        pe_tmp_group_begin();
        for (size_t i = 0; i < k->nf && !st; i++) {
            st = pe_tmp_commit(NULL, k->f[i].tmp, k->f[i].final, err); /* NULL: a device */
            free(k->f[i].tmp);
            k->f[i].tmp = NULL; /* the group's, or removed */
        }
        if (st)
            pe_tmp_group_abort();
        else
            st = pe_tmp_group_end(err);
    }
    dir_w_free(w, st != POSENC_OK);
    return st;
}

static void dir_w_abort(posenc_writer *w) { dir_w_free(w, 1); }

/* An opaque '<V2' array: its NPY descr, not readable (posenc_container_array_type). */
static const char *dir_array_type(const posenc_container *c, size_t i, uint64_t *nbytes,
                                   int *readable)
{
    const struct dir_cont *k = c->impl;
    return pe_npy_array_type(&k->h[i], nbytes, readable);
}

const pe_backend pe_backend_dir = {
    .format = POSENC_FMT_DIR,
    .open = dir_open,
    .reader_open = dir_reader_open,
    .read = dir_read,
    .reader_close = dir_reader_close,
    .close = dir_close,
    .w_start = dir_w_start,
    .w_write = dir_w_write,
    .w_commit = dir_w_commit,
    .w_abort = dir_w_abort,
    .array_type = dir_array_type,
};

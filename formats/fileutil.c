/* fileutil.c: helpers every backend shares: temporary files beside the target that are renamed
 * into place on commit, the writer's metadata as JSON, and exact reads and writes. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend.h"
#include "strbuf.h"

/* Is final_path an existing non-regular file (a device such as /dev/null, a FIFO)? Those are
 * written in place: renaming a temporary over /dev/null would replace the device node. */
static int is_special(const char *final_path)
{
    struct stat st;
    return stat(final_path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

/* The process umask, read without changing it (umask(2) alone would briefly set it, racing
 * with threads that create files); falls back to umask(2) without /proc. */
static mode_t current_umask(void)
{
    FILE *fp = fopen("/proc/self/status", "r");
    char line[256];
    unsigned mask;
    while (fp && fgets(line, sizeof line, fp))
        if (sscanf(line, "Umask: %o", &mask) == 1) {
            fclose(fp);
            return (mode_t)mask;
        }
    if (fp)
        fclose(fp);
    mode_t m = umask(0);
    umask(m);
    return m;
}

posenc_status posenc_tmp_create(const char *final_path, char **tmp_path, FILE **fp,
                                posenc_error *err)
{
    *tmp_path = NULL;
    *fp = NULL;
    if (is_special(final_path)) {
        FILE *f = fopen(final_path, "wb");
        if (!f)
            return posenc_seterr(err, POSENC_EIO, "cannot open '%s': %s", final_path,
                                 strerror(errno));
        *fp = f;
        return POSENC_OK; /* *tmp_path stays NULL: commit closes, discard closes */
    }
    const char *slash = strrchr(final_path, '/');
    size_t dlen = slash ? (size_t)(slash - final_path) + 1 : 0;
    const char *base = final_path + dlen;
    if (*base == '\0')
        return posenc_seterr(err, POSENC_EINVAL, "'%s': not a file name", final_path);
    static const char mid[] = ".posenc-tmp-XXXXXX-";
    size_t blen = strlen(base);
    char *t = malloc(dlen + sizeof mid + blen);
    if (!t)
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    memcpy(t, final_path, dlen);
    memcpy(t + dlen, mid, sizeof mid - 1);
    memcpy(t + dlen + sizeof mid - 1, base, blen + 1);
    int fd = mkstemps(t, (int)blen + 1);
    if (fd < 0) {
        int e = errno;
        free(t);
        return posenc_seterr(err, POSENC_EIO, "cannot create '%s': %s", final_path, strerror(e));
    }
    /* mkstemp makes 0600; give the file the mode open(2) would (0666 & ~umask). */
    (void)fchmod(fd, 0666 & ~current_umask());
    FILE *f = fdopen(fd, "wb");
    if (!f) {
        int e = errno;
        close(fd);
        unlink(t);
        free(t);
        return posenc_seterr(err, POSENC_EIO, "cannot create '%s': %s", final_path, strerror(e));
    }
    *tmp_path = t;
    *fp = f;
    return POSENC_OK;
}

posenc_status posenc_tmp_commit(FILE *fp, const char *tmp_path, const char *final_path,
                                posenc_error *err)
{
    int e = 0;
    if (fp) {
        if (fflush(fp) != 0 || ferror(fp))
            e = errno ? errno : EIO;
        if (fclose(fp) != 0 && !e)
            e = errno ? errno : EIO;
    }
    if (!e && tmp_path && rename(tmp_path, final_path) != 0)
        e = errno;
    if (e) {
        /* fp is closed either way; the temporary goes so that nothing partial remains */
        if (tmp_path)
            unlink(tmp_path);
        return posenc_seterr(err, POSENC_EIO, "cannot write '%s': %s", final_path, strerror(e));
    }
    return POSENC_OK;
}

void posenc_tmp_discard(FILE *fp, const char *tmp_path)
{
    if (fp)
        fclose(fp);
    if (tmp_path)
        unlink(tmp_path);
}

char *posenc_writer_meta_json(const posenc_writer *w)
{
    posenc_strbuf b = { 0 };
    posenc_strbuf_puts(&b, "{");
    for (size_t i = 0; i < w->nmeta; i++) {
        if (i)
            posenc_strbuf_puts(&b, ", ");
        posenc_strbuf_json_string(&b, w->meta_keys[i]);
        posenc_strbuf_puts(&b, ": ");
        posenc_strbuf_puts(&b, w->meta_vals[i]);
    }
    posenc_strbuf_puts(&b, "}");
    return posenc_strbuf_finish(&b);
}

posenc_status posenc_read_exact(FILE *fp, void *buf, size_t n, const char *path, const char *what,
                                posenc_error *err)
{
    size_t got = n ? fread(buf, 1, n, fp) : 0;
    if (got == n)
        return POSENC_OK;
    if (ferror(fp))
        return posenc_seterr(err, POSENC_EIO, "cannot read '%s': %s", path,
                             strerror(errno ? errno : EIO));
    return posenc_seterr(err, POSENC_EFORMAT, "'%s': truncated %s", path, what);
}

posenc_status posenc_write_exact(FILE *fp, const void *buf, size_t n, const char *path,
                                 posenc_error *err)
{
    if (n && fwrite(buf, 1, n, fp) != n)
        return posenc_seterr(err, POSENC_EIO, "cannot write '%s': %s", path,
                             strerror(errno ? errno : EIO));
    return POSENC_OK;
}

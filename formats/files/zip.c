/* zip.c: the ZIP container under NPZ. Reader: end of central directory (found by scanning back
 * over a comment), ZIP64 locator and record, central directory entries with ZIP64 extra fields,
 * local headers skipped by their own lengths, stored and deflated members streamed with CRC-32
 * checks. Writer: ZIP64 local headers patched after the data (as Python's zipfile does with
 * force_zip64), central directory, ZIP64 end records when sizes or offsets need them. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <zlib.h>

#include "formats/io/backend.h"
#include "formats/files/zip.h"

#define SIG_LOCAL 0x04034b50u
#define SIG_CENTRAL 0x02014b50u
#define SIG_EOCD 0x06054b50u
#define SIG_EOCD64 0x06064b50u
#define SIG_LOC64 0x07064b50u
#define U32_MAX_FIELD 0xffffffffu
#define CD_MAX ((uint64_t)256 << 20)   /* central directory bytes read into memory */
#define INBUF ((size_t)256 << 10)
#define POSENC_ZIP_STREAM_BUF ((size_t)1 << 20)

static uint16_t rd16(const unsigned char *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t rd32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t rd64(const unsigned char *p) { return rd32(p) | (uint64_t)rd32(p + 4) << 32; }
static void wr16(unsigned char *p, uint16_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
}
static void wr32(unsigned char *p, uint32_t v)
{
    wr16(p, (uint16_t)v);
    wr16(p + 2, (uint16_t)(v >> 16));
}
static void wr64(unsigned char *p, uint64_t v)
{
    wr32(p, (uint32_t)v);
    wr32(p + 4, (uint32_t)(v >> 32));
}

static posenc_status read_at(FILE *fp, uint64_t off, void *buf, size_t n, const char *path,
                             const char *what, posenc_error *err)
{
    if (fseeko(fp, (off_t)off, SEEK_SET) != 0)
        return posenc_seterr(err, POSENC_EIO, "cannot read '%s': %s", path, strerror(errno));
    return pe_read_exact(fp, buf, n, path, what, err);
}

/* ---- reader ---- */

void pe_zip_close(pe_zip *z)
{
    if (!z)
        return;
    for (size_t i = 0; i < z->n; i++)
        free(z->e[i].name);
    free(z->e);
    free(z->path);
    free(z);
}

static posenc_status parse_cd(pe_zip *z, const unsigned char *cd, uint64_t cd_size,
                              uint64_t cd_off, uint64_t count, posenc_error *err)
{
    const char *path = z->path;
    z->e = calloc(count ? (size_t)count : 1, sizeof *z->e);
    if (!z->e)
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    uint64_t p = 0;
    for (uint64_t i = 0; i < count; i++) {
        if (cd_size - p < 46 || rd32(cd + p) != SIG_CENTRAL)
            return posenc_seterr(err, POSENC_EFORMAT,
                                 "'%s': corrupt zip central directory (entry %llu of %llu)", path,
                                 (unsigned long long)i + 1, (unsigned long long)count);
        const unsigned char *h = cd + p;
        pe_zip_entry *e = &z->e[i];
        uint16_t nlen = rd16(h + 28), elen = rd16(h + 30), clen = rd16(h + 32);
        if (cd_size - p - 46 < (uint64_t)nlen + elen + clen)
            return posenc_seterr(err, POSENC_EFORMAT,
                                 "'%s': corrupt zip central directory (entry %llu overruns it)",
                                 path, (unsigned long long)i + 1);
        if (nlen > PE_ZIP_MAX_NAME)
            return posenc_seterr(err, POSENC_EFORMAT, "'%s': zip member name of %u bytes is too "
                                 "long", path, nlen);
        if (memchr(h + 46, '\0', nlen))
            return posenc_seterr(err, POSENC_EFORMAT, "'%s': zip member name holds a NUL byte",
                                 path);
        e->name = malloc((size_t)nlen + 1);
        if (!e->name)
            return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
        memcpy(e->name, h + 46, nlen);
        e->name[nlen] = '\0';
        z->n = (size_t)i + 1;
        e->flags = rd16(h + 8);
        e->method = rd16(h + 10);
        e->crc = rd32(h + 16);
        e->csize = rd32(h + 20);
        e->usize = rd32(h + 24);
        e->offset = rd32(h + 42);
        int need_u = e->usize == U32_MAX_FIELD, need_c = e->csize == U32_MAX_FIELD,
            need_o = e->offset == U32_MAX_FIELD;
        const unsigned char *x = h + 46 + nlen, *xend = x + elen;
        while (xend - x >= 4) {
            uint16_t id = rd16(x), sz = rd16(x + 2);
            if ((size_t)(xend - x - 4) < sz)
                break; /* a malformed trailing extra field: ignore the rest */
            if (id == 1) {
                const unsigned char *q = x + 4, *qend = q + sz;
                if (need_u) {
                    if (qend - q < 8)
                        goto bad64;
                    e->usize = rd64(q);
                    q += 8;
                    need_u = 0;
                }
                if (need_c) {
                    if (qend - q < 8)
                        goto bad64;
                    e->csize = rd64(q);
                    q += 8;
                    need_c = 0;
                }
                if (need_o) {
                    if (qend - q < 8)
                        goto bad64;
                    e->offset = rd64(q);
                    need_o = 0;
                }
            }
            x += 4 + sz;
        }
        if (need_u || need_c || need_o)
            goto bad64;
        if (e->offset >= cd_off || cd_off - e->offset < 30 || e->csize > z->size ||
            e->offset + 30 + e->csize > z->size)
            return posenc_seterr(err, POSENC_EFORMAT,
                                 "'%s': zip member '%s' lies outside the file", path, e->name);
        if (e->method == 0 && e->csize != e->usize)
            return posenc_seterr(err, POSENC_EFORMAT,
                                 "'%s': stored zip member '%s' has different sizes (%llu and "
                                 "%llu)", path, e->name, (unsigned long long)e->csize,
                                 (unsigned long long)e->usize);
        /* deflate cannot expand by more than 1032:1 (a 258-byte match per 2 bits, RFC 1951):
         * a member that declares more lies about its size */
        if (e->method == 8 && e->usize / 1032 > e->csize + 64)
            return posenc_seterr(err, POSENC_EFORMAT,
                                 "'%s': zip member '%s' declares %llu bytes from %llu compressed "
                                 "bytes, more than deflate can expand", path, e->name,
                                 (unsigned long long)e->usize, (unsigned long long)e->csize);
        p += 46 + (uint64_t)nlen + elen + clen;
        continue;
    bad64:
        return posenc_seterr(err, POSENC_EFORMAT,
                             "'%s': zip member '%s' lacks its ZIP64 sizes", path, e->name);
    }
    return POSENC_OK;
}

posenc_status pe_zip_open(const char *path, pe_zip **out, posenc_error *err)
{
    posenc_status st = POSENC_OK;
    unsigned char *tail = NULL, *cd = NULL;
    pe_zip *z = calloc(1, sizeof *z);
    if (!z || !(z->path = strdup(path))) {
        free(z);
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    }
    FILE *fp = NULL;
    if (pe_open_input(path, 0, &fp, err) != POSENC_OK) {
        st = err ? err->code : POSENC_EIO;
        goto out;
    }
    struct stat sb;
    if (fstat(fileno(fp), &sb) != 0 || !S_ISREG(sb.st_mode)) {
        st = posenc_seterr(err, POSENC_EUNSUPPORTED, "'%s': a zip archive must be a regular file",
                           path);
        goto out;
    }
    z->size = (uint64_t)sb.st_size;
    if (z->size < 22) {
        st = posenc_seterr(err, POSENC_EFORMAT, "'%s': not a zip archive (too short)", path);
        goto out;
    }
    size_t tlen = z->size < 22 + 65535 ? (size_t)z->size : 22 + 65535;
    tail = malloc(tlen);
    if (!tail) {
        st = posenc_seterr(err, POSENC_ENOMEM, "out of memory");
        goto out;
    }
    uint64_t tail_off = z->size - tlen;
    if ((st = read_at(fp, tail_off, tail, tlen, path, "zip archive", err)))
        goto out;
    size_t pos = tlen - 22 + 1;
    int found = 0;
    while (pos-- > 0)
        if (rd32(tail + pos) == SIG_EOCD && pos + 22 + (size_t)rd16(tail + pos + 20) <= tlen) {
            found = 1;
            break;
        }
    if (!found) {
        st = posenc_seterr(err, POSENC_EFORMAT,
                           "'%s': not a zip archive (no end of central directory)", path);
        goto out;
    }
    const unsigned char *eocd = tail + pos;
    uint64_t eocd_off = tail_off + pos;
    uint64_t count = rd16(eocd + 10), cd_size = rd32(eocd + 12), cd_off = rd32(eocd + 16);
    uint64_t cd_limit = eocd_off; /* the central directory ends before this */
    if (rd16(eocd + 4) != 0 || rd16(eocd + 6) != 0 || rd16(eocd + 8) != rd16(eocd + 10)) {
        st = posenc_seterr(err, POSENC_EUNSUPPORTED, "'%s': multi-disk zip archives are not "
                           "supported", path);
        goto out;
    }
    if (eocd_off >= 20) {
        unsigned char loc[20], rec[56];
        if ((st = read_at(fp, eocd_off - 20, loc, 20, path, "zip archive", err)))
            goto out;
        if (rd32(loc) == SIG_LOC64) {
            uint64_t rec_off = rd64(loc + 8);
            if (rec_off > eocd_off - 20 || eocd_off - 20 - rec_off < 56) {
                st = posenc_seterr(err, POSENC_EFORMAT, "'%s': corrupt ZIP64 end locator", path);
                goto out;
            }
            if ((st = read_at(fp, rec_off, rec, 56, path, "zip archive", err)))
                goto out;
            if (rd32(rec) != SIG_EOCD64) {
                st = posenc_seterr(err, POSENC_EFORMAT, "'%s': corrupt ZIP64 end record", path);
                goto out;
            }
            count = rd64(rec + 32);
            cd_size = rd64(rec + 40);
            cd_off = rd64(rec + 48);
            cd_limit = rec_off;
        }
    }
    if (count > PE_ZIP_MAX_MEMBERS) {
        st = posenc_seterr(err, POSENC_ERANGE, "'%s': %llu zip members (at most %d)", path,
                           (unsigned long long)count, PE_ZIP_MAX_MEMBERS);
        goto out;
    }
    if (cd_off > cd_limit || cd_size > cd_limit - cd_off || cd_size > CD_MAX ||
        cd_size < 46 * count) {
        st = posenc_seterr(err, POSENC_EFORMAT, "'%s': zip central directory lies outside the "
                           "file", path);
        goto out;
    }
    cd = malloc(cd_size ? (size_t)cd_size : 1);
    if (!cd) {
        st = posenc_seterr(err, POSENC_ENOMEM, "out of memory");
        goto out;
    }
    if ((st = read_at(fp, cd_off, cd, (size_t)cd_size, path, "zip central directory", err)))
        goto out;
    st = parse_cd(z, cd, cd_size, cd_off, count, err);
out:
    if (fp)
        fclose(fp);
    free(tail);
    free(cd);
    if (st) {
        pe_zip_close(z);
        return st;
    }
    *out = z;
    return POSENC_OK;
}

struct pe_zip_stream {
    const pe_zip *z;
    const pe_zip_entry *e;
    FILE *fp;
    int own;
    char *vbuf;
    uint64_t cleft;           /* compressed bytes not yet read from the file */
    uint64_t uout;            /* uncompressed bytes delivered */
    uint32_t crc;
    int deflated, zinit, zend;
    z_stream zs;
    unsigned char *in;
    size_t inbuf;             /* size of in */
};

void pe_zip_stream_close(pe_zip_stream *s)
{
    if (!s)
        return;
    if (s->zinit)
        inflateEnd(&s->zs);
    if (s->own && s->fp)
        fclose(s->fp);
    free(s->vbuf);
    free(s->in);
    free(s);
}

posenc_status pe_zip_stream_open(const pe_zip *z, size_t i, FILE *fp,
                                     pe_zip_stream **out, posenc_error *err)
{
    const pe_zip_entry *e = &z->e[i];
    posenc_status st = POSENC_OK;
    pe_zip_stream *s = calloc(1, sizeof *s);
    if (!s)
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    s->z = z;
    s->e = e;
    s->crc = (uint32_t)crc32(0L, Z_NULL, 0);
    if (e->flags & 1) {
        st = posenc_seterr(err, POSENC_EUNSUPPORTED, "'%s': zip member '%s' is encrypted",
                           z->path, e->name);
        goto out;
    }
    if (e->method != 0 && e->method != 8) {
        st = posenc_seterr(err, POSENC_EUNSUPPORTED,
                           "'%s': zip member '%s' uses compression method %u (only stored and "
                           "deflated are supported)", z->path, e->name, e->method);
        goto out;
    }
    if (fp) {
        s->fp = fp;
    } else {
        s->fp = fopen(z->path, "rb");
        if (!s->fp) {
            st = posenc_seterr(err, POSENC_EIO, "cannot open '%s': %s", z->path, strerror(errno));
            goto out;
        }
        s->own = 1;
        /* a stdio buffer sized to the member: small members need no megabyte */
        size_t vb = e->csize + 4096 < POSENC_ZIP_STREAM_BUF ? (size_t)e->csize + 4096
                                                            : POSENC_ZIP_STREAM_BUF;
        s->vbuf = malloc(vb);
        if (s->vbuf)
            setvbuf(s->fp, s->vbuf, _IOFBF, vb);
    }
    unsigned char lh[30];
    if ((st = read_at(s->fp, e->offset, lh, 30, z->path, "zip local header", err)))
        goto out;
    if (rd32(lh) != SIG_LOCAL) {
        st = posenc_seterr(err, POSENC_EFORMAT, "'%s': zip member '%s' has no local header",
                           z->path, e->name);
        goto out;
    }
    uint64_t data = e->offset + 30 + rd16(lh + 26) + rd16(lh + 28);
    if (data > z->size || e->csize > z->size - data) {
        st = posenc_seterr(err, POSENC_EFORMAT, "'%s': zip member '%s' runs past the end of the "
                           "file", z->path, e->name);
        goto out;
    }
    if (fseeko(s->fp, (off_t)data, SEEK_SET) != 0) {
        st = posenc_seterr(err, POSENC_EIO, "cannot read '%s': %s", z->path, strerror(errno));
        goto out;
    }
    s->cleft = e->csize;
    if (e->method == 8) {
        s->deflated = 1;
        s->inbuf = e->csize < INBUF ? (size_t)e->csize + 1 : INBUF;
        s->in = malloc(s->inbuf);
        if (!s->in) {
            st = posenc_seterr(err, POSENC_ENOMEM, "out of memory");
            goto out;
        }
        if (inflateInit2(&s->zs, -MAX_WBITS) != Z_OK) {
            st = posenc_seterr(err, POSENC_ENOMEM, "out of memory (zlib)");
            goto out;
        }
        s->zinit = 1;
    }
out:
    if (st) {
        pe_zip_stream_close(s);
        return st;
    }
    *out = s;
    return POSENC_OK;
}

static posenc_status refill(pe_zip_stream *s, posenc_error *err)
{
    size_t k = s->cleft < s->inbuf ? (size_t)s->cleft : s->inbuf;
    posenc_status st = pe_read_exact(s->fp, s->in, k, s->z->path, "zip member", err);
    if (st)
        return st;
    s->cleft -= k;
    s->zs.next_in = s->in;
    s->zs.avail_in = (uInt)k;
    return POSENC_OK;
}

/* Inflate exactly n bytes into buf. */
static posenc_status inflate_n(pe_zip_stream *s, unsigned char *buf, size_t n,
                               posenc_error *err)
{
    const char *path = s->z->path, *name = s->e->name;
    posenc_status st;
    while (n > 0) {
        uInt chunk = n > (1u << 30) ? (1u << 30) : (uInt)n;
        s->zs.next_out = buf;
        s->zs.avail_out = chunk;
        while (s->zs.avail_out > 0) {
            if (s->zend)
                return posenc_seterr(err, POSENC_EFORMAT,
                                     "'%s': zip member '%s' inflates to fewer bytes than its "
                                     "declared %llu", path, name,
                                     (unsigned long long)s->e->usize);
            if (s->zs.avail_in == 0 && s->cleft > 0 && (st = refill(s, err)))
                return st;
            uInt before_out = s->zs.avail_out, before_in = s->zs.avail_in;
            int rc = inflate(&s->zs, Z_NO_FLUSH);
            if (rc == Z_STREAM_END) {
                s->zend = 1;
            } else if (rc == Z_BUF_ERROR || (rc == Z_OK && s->zs.avail_out == before_out &&
                                             s->zs.avail_in == before_in)) {
                if (s->zs.avail_in == 0 && s->cleft == 0)
                    return posenc_seterr(err, POSENC_EFORMAT,
                                         "'%s': zip member '%s' is truncated (compressed data "
                                         "ends early)", path, name);
            } else if (rc != Z_OK) {
                return posenc_seterr(err, POSENC_EFORMAT,
                                     "'%s': zip member '%s' holds corrupt deflate data%s%s",
                                     path, name, s->zs.msg ? ": " : "",
                                     s->zs.msg ? s->zs.msg : "");
            }
        }
        buf += chunk;
        n -= chunk;
    }
    return POSENC_OK;
}

/* After the declared size: the deflate stream must end there and the CRC must match. */
static posenc_status finish_member(pe_zip_stream *s, posenc_error *err)
{
    const char *path = s->z->path, *name = s->e->name;
    posenc_status st;
    while (s->deflated && !s->zend) {
        unsigned char extra;
        if (s->zs.avail_in == 0 && s->cleft > 0 && (st = refill(s, err)))
            return st;
        s->zs.next_out = &extra;
        s->zs.avail_out = 1;
        uInt before_in = s->zs.avail_in;
        int rc = inflate(&s->zs, Z_NO_FLUSH);
        if (s->zs.avail_out == 0)
            return posenc_seterr(err, POSENC_EFORMAT,
                                 "'%s': zip member '%s' inflates to more than its declared %llu "
                                 "bytes", path, name, (unsigned long long)s->e->usize);
        if (rc == Z_STREAM_END)
            s->zend = 1;
        else if (rc != Z_OK && rc != Z_BUF_ERROR)
            return posenc_seterr(err, POSENC_EFORMAT,
                                 "'%s': zip member '%s' holds corrupt deflate data", path, name);
        else if (s->zs.avail_in == before_in && s->zs.avail_in == 0 && s->cleft == 0)
            return posenc_seterr(err, POSENC_EFORMAT,
                                 "'%s': zip member '%s' is truncated (compressed data ends "
                                 "early)", path, name);
        else if (rc == Z_BUF_ERROR && s->zs.avail_in == before_in)
            return posenc_seterr(err, POSENC_EFORMAT,
                                 "'%s': zip member '%s' holds corrupt deflate data", path, name);
    }
    if (s->crc != s->e->crc)
        return posenc_seterr(err, POSENC_EFORMAT,
                             "'%s': zip member '%s' fails its CRC-32 check (corrupt data)", path,
                             name);
    return POSENC_OK;
}

posenc_status pe_zip_stream_read(pe_zip_stream *s, void *buf, size_t n,
                                     posenc_error *err)
{
    posenc_status st;
    if (n > s->e->usize - s->uout)
        return posenc_seterr(err, POSENC_EFORMAT,
                             "'%s': zip member '%s' is truncated (%llu bytes declared)",
                             s->z->path, s->e->name, (unsigned long long)s->e->usize);
    if (n == 0)
        return POSENC_OK;
    if (s->deflated) {
        if ((st = inflate_n(s, buf, n, err)))
            return st;
    } else {
        if ((st = pe_read_exact(s->fp, buf, n, s->z->path, "zip member", err)))
            return st;
        s->cleft -= n;
    }
    const unsigned char *p = buf;
    for (size_t left = n; left > 0;) {
        uInt k = left > (1u << 30) ? (1u << 30) : (uInt)left;
        s->crc = (uint32_t)crc32(s->crc, p, k);
        p += k;
        left -= k;
    }
    s->uout += n;
    if (s->uout == s->e->usize)
        return finish_member(s, err);
    return POSENC_OK;
}

posenc_status pe_zip_stream_src(void *ctx, void *buf, size_t n, posenc_error *err)
{
    return pe_zip_stream_read(ctx, buf, n, err);
}

/* ---- writer ---- */

struct wentry {
    char *name;
    uint16_t method, flags;
    uint32_t crc;
    uint64_t csize, usize, offset;
};

struct pe_zipw {
    FILE *fp;
    const char *path;
    uint64_t off;
    size_t n, cap;
    struct wentry *e;
    int open;                 /* a member is being written */
    int force64;              /* ZIP64 end records even when not needed */
    int zinit;
    z_stream zs;
    unsigned char *out;
    pe_writeout wo;           /* early write-out of the temporary (a device: a no-op) */
};

#define OUTBUF ((size_t)256 << 10)
#define DOS_DATE 0x0021 /* 1980-01-01: fixed so that output is reproducible */

static posenc_status put(pe_zipw *zw, const void *p, size_t n, posenc_error *err)
{
    posenc_status st = pe_write_exact(zw->fp, p, n, zw->path, err);
    if (!st) {
        zw->off += n;
        pe_tmp_writeout(zw->fp, &zw->wo, n);
    }
    return st;
}

posenc_status pe_zipw_new(FILE *fp, const char *path, pe_zipw **out, posenc_error *err)
{
    pe_zipw *zw = calloc(1, sizeof *zw);
    if (!zw)
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    zw->fp = fp;
    zw->path = path;
    *out = zw;
    return POSENC_OK;
}

void pe_zipw_force_zip64(pe_zipw *zw) { zw->force64 = 1; }

void pe_zipw_free(pe_zipw *zw)
{
    if (!zw)
        return;
    if (zw->zinit)
        deflateEnd(&zw->zs);
    for (size_t i = 0; i < zw->n; i++)
        free(zw->e[i].name);
    free(zw->e);
    free(zw->out);
    free(zw);
}

posenc_status pe_zipw_begin(pe_zipw *zw, const char *name, int deflate,
                                posenc_error *err)
{
    size_t nlen = strlen(name);
    if (nlen == 0 || nlen > PE_ZIP_MAX_NAME)
        return posenc_seterr(err, POSENC_EINVAL, "'%s': bad zip member name '%.64s'", zw->path,
                             name);
    if (zw->n >= PE_ZIP_MAX_MEMBERS)
        return posenc_seterr(err, POSENC_ERANGE, "'%s': too many members (at most %d)", zw->path,
                             PE_ZIP_MAX_MEMBERS);
    if (zw->n == zw->cap) {
        size_t cap = zw->cap ? zw->cap * 2 : 8;
        struct wentry *ne = realloc(zw->e, cap * sizeof *ne);
        if (!ne)
            return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
        zw->e = ne;
        zw->cap = cap;
    }
    struct wentry *e = &zw->e[zw->n];
    memset(e, 0, sizeof *e);
    if (!(e->name = strdup(name)))
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    zw->n++;
    e->method = deflate ? 8 : 0;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        if (*p >= 0x80)
            e->flags = 0x800; /* UTF-8 name */
    e->offset = zw->off;
    e->crc = (uint32_t)crc32(0L, Z_NULL, 0);
    if (deflate) {
        if (!zw->out && !(zw->out = malloc(OUTBUF)))
            return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
        if (zw->zinit) {
            if (deflateReset(&zw->zs) != Z_OK)
                return posenc_seterr(err, POSENC_EIO, "'%s': zlib deflateReset failed", zw->path);
        } else {
            if (deflateInit2(&zw->zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -MAX_WBITS, 8,
                             Z_DEFAULT_STRATEGY) != Z_OK)
                return posenc_seterr(err, POSENC_ENOMEM, "out of memory (zlib)");
            zw->zinit = 1;
        }
    }
    unsigned char h[30 + 20];
    wr32(h, SIG_LOCAL);
    wr16(h + 4, 45);
    wr16(h + 6, e->flags);
    wr16(h + 8, e->method);
    wr16(h + 10, 0);
    wr16(h + 12, DOS_DATE);
    wr32(h + 14, 0);                 /* CRC, patched by pe_zipw_end */
    wr32(h + 18, U32_MAX_FIELD);     /* sizes in the ZIP64 extra field */
    wr32(h + 22, U32_MAX_FIELD);
    wr16(h + 26, (uint16_t)nlen);
    wr16(h + 28, 20);
    posenc_status st;
    if ((st = put(zw, h, 30, err)) || (st = put(zw, name, nlen, err)))
        return st;
    wr16(h + 30, 1);
    wr16(h + 32, 16);
    wr64(h + 34, 0);
    wr64(h + 42, 0);
    if ((st = put(zw, h + 30, 20, err)))
        return st;
    zw->open = 1;
    return POSENC_OK;
}

static posenc_status drain(pe_zipw *zw, int flush, posenc_error *err)
{
    posenc_status st;
    struct wentry *e = &zw->e[zw->n - 1];
    for (;;) {
        zw->zs.next_out = zw->out;
        zw->zs.avail_out = (uInt)OUTBUF;
        int rc = deflate(&zw->zs, flush);
        if (rc == Z_STREAM_ERROR)
            return posenc_seterr(err, POSENC_EIO, "'%s': zlib deflate failed", zw->path);
        size_t got = OUTBUF - zw->zs.avail_out;
        if ((st = put(zw, zw->out, got, err)))
            return st;
        e->csize += got;
        if (flush == Z_FINISH ? rc == Z_STREAM_END
                              : (zw->zs.avail_in == 0 && zw->zs.avail_out != 0))
            return POSENC_OK;
    }
}

posenc_status pe_zipw_data(pe_zipw *zw, const void *buf, size_t n, posenc_error *err)
{
    struct wentry *e = &zw->e[zw->n - 1];
    const unsigned char *p = buf;
    posenc_status st;
    while (n > 0) {
        uInt k = n > (1u << 30) ? (1u << 30) : (uInt)n;
        e->crc = (uint32_t)crc32(e->crc, p, k);
        e->usize += k;
        if (e->method == 8) {
            zw->zs.next_in = (unsigned char *)p;
            zw->zs.avail_in = k;
            if ((st = drain(zw, Z_NO_FLUSH, err)))
                return st;
        } else {
            if ((st = put(zw, p, k, err)))
                return st;
            e->csize += k;
        }
        p += k;
        n -= k;
    }
    return POSENC_OK;
}

posenc_status pe_zipw_end(pe_zipw *zw, posenc_error *err)
{
    struct wentry *e = &zw->e[zw->n - 1];
    posenc_status st;
    if (e->method == 8) {
        zw->zs.next_in = NULL;
        zw->zs.avail_in = 0;
        if ((st = drain(zw, Z_FINISH, err)))
            return st;
    }
    zw->open = 0;
    unsigned char b[16];
    uint64_t end = zw->off;
    wr32(b, e->crc);
    if (fseeko(zw->fp, (off_t)(e->offset + 14), SEEK_SET) != 0 ||
        (st = pe_write_exact(zw->fp, b, 4, zw->path, err)) != POSENC_OK)
        goto fail;
    wr64(b, e->usize);
    wr64(b + 8, e->csize);
    if (fseeko(zw->fp, (off_t)(e->offset + 30 + strlen(e->name) + 4), SEEK_SET) != 0 ||
        (st = pe_write_exact(zw->fp, b, 16, zw->path, err)) != POSENC_OK ||
        fseeko(zw->fp, (off_t)end, SEEK_SET) != 0)
        goto fail;
    return POSENC_OK;
fail:
    return posenc_seterr(err, POSENC_EIO, "cannot write '%s': %s", zw->path,
                         strerror(errno ? errno : EIO));
}

posenc_status pe_zipw_finish(pe_zipw *zw, posenc_error *err)
{
    posenc_status st;
    uint64_t cd_off = zw->off;
    for (size_t i = 0; i < zw->n; i++) {
        struct wentry *e = &zw->e[i];
        unsigned char h[46], x[28];
        size_t nlen = strlen(e->name), xl = 4;
        int zu = e->usize >= U32_MAX_FIELD, zc = e->csize >= U32_MAX_FIELD,
            zo = e->offset >= U32_MAX_FIELD;
        if (zu) {
            wr64(x + xl, e->usize);
            xl += 8;
        }
        if (zc) {
            wr64(x + xl, e->csize);
            xl += 8;
        }
        if (zo) {
            wr64(x + xl, e->offset);
            xl += 8;
        }
        wr16(x, 1);
        wr16(x + 2, (uint16_t)(xl - 4));
        if (xl == 4)
            xl = 0;
        wr32(h, SIG_CENTRAL);
        wr16(h + 4, (3 << 8) | 45);  /* made by: Unix, 4.5 */
        wr16(h + 6, xl ? 45 : 20);
        wr16(h + 8, e->flags);
        wr16(h + 10, e->method);
        wr16(h + 12, 0);
        wr16(h + 14, DOS_DATE);
        wr32(h + 16, e->crc);
        wr32(h + 20, zc ? U32_MAX_FIELD : (uint32_t)e->csize);
        wr32(h + 24, zu ? U32_MAX_FIELD : (uint32_t)e->usize);
        wr16(h + 28, (uint16_t)nlen);
        wr16(h + 30, (uint16_t)xl);
        wr16(h + 32, 0);
        wr16(h + 34, 0);
        wr16(h + 36, 0);
        wr32(h + 38, 0644u << 16);
        wr32(h + 42, zo ? U32_MAX_FIELD : (uint32_t)e->offset);
        if ((st = put(zw, h, 46, err)) || (st = put(zw, e->name, nlen, err)) ||
            (st = put(zw, x, xl, err)))
            return st;
    }
    uint64_t cd_size = zw->off - cd_off;
    int z64 = zw->force64 || zw->n >= 0xffff || cd_off >= U32_MAX_FIELD || cd_size >= U32_MAX_FIELD;
    unsigned char r[56 + 20 + 22];
    size_t rl = 0;
    if (z64) {
        uint64_t rec_off = zw->off;
        wr32(r, SIG_EOCD64);
        wr64(r + 4, 44);
        wr16(r + 12, (3 << 8) | 45);
        wr16(r + 14, 45);
        wr32(r + 16, 0);
        wr32(r + 20, 0);
        wr64(r + 24, zw->n);
        wr64(r + 32, zw->n);
        wr64(r + 40, cd_size);
        wr64(r + 48, cd_off);
        wr32(r + 56, SIG_LOC64);
        wr32(r + 60, 0);
        wr64(r + 64, rec_off);
        wr32(r + 72, 1);
        rl = 76;
    }
    wr32(r + rl, SIG_EOCD);
    wr16(r + rl + 4, 0);
    wr16(r + rl + 6, 0);
    wr16(r + rl + 8, zw->n >= 0xffff ? 0xffff : (uint16_t)zw->n);
    wr16(r + rl + 10, zw->n >= 0xffff ? 0xffff : (uint16_t)zw->n);
    wr32(r + rl + 12, cd_size >= U32_MAX_FIELD ? U32_MAX_FIELD : (uint32_t)cd_size);
    wr32(r + rl + 16, cd_off >= U32_MAX_FIELD ? U32_MAX_FIELD : (uint32_t)cd_off);
    wr16(r + rl + 20, 0);
    return put(zw, r, rl + 22, err);
}

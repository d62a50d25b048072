/* hdf5.c: HDF5 files through libhdf5 (1.10 serial), read and write.
 *
 * Reading lists every dataset of the file, recursively, named by its absolute path ("/layer0/q").
 * Element types: IEEE f32/f64, signed 32/64-bit and unsigned 8-bit integers in either byte order
 * (HDF5 converts to native), half precision as h5py writes it (a float type of 2 bytes with fields
 * 15,10,5,0,10 and exponent bias 15), bfloat16 as the analogous custom float (fields 15,7,8,0,7,
 * bias 127), and a 2-byte opaque type as bfloat16 when the caller says so (assume_bf16; h5py and
 * Keras store bfloat16 that way). Data are read by hyperslab, so datasets larger than memory
 * stream. Attributes of the root group are the container's metadata. Each dataset's declared
 * size is checked against what the file can hold when the file is opened (storage_check).
 *
 * Writing creates one dataset per declared array (intermediate groups included), contiguous, or
 * chunked (about 1 MiB per chunk, split along the first axes) with shuffle + gzip level 4 when
 * compression is asked for; every metadata key becomes a root attribute holding the JSON value
 * text as a variable-length UTF-8 string. The file is built under a temporary name beside the
 * target, through posenc's own file driver (h5drv_*: a failed write must not reach libhdf5),
 * and renamed into place on commit; pipes and devices are refused. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <hdf5.h>

#include "formats/io/backend.h"

#define H5_CHUNK_BYTES (1u << 20)   /* target chunk size when compressing */
#define H5_CACHE_BYTES (16u << 20)  /* raw-data chunk cache per dataset */
#define H5_MAX_ATTR_ELEMS 65536     /* numeric attributes larger than this are not metadata */

/* HDF5 prints its error stack unless told not to; in a thread-safe build the setting is per
 * thread, so every entry point that may run on a new thread (readers in apply's producer
 * thread) calls this. */
static void h5_quiet(void) { H5Eset_auto2(H5E_DEFAULT, NULL, NULL); }

typedef struct h5_errinfo {
    char desc[200]; /* the innermost message */
    int cut;        /* desc is cut short */
    int sys_errno;  /* the errno of a failed system call, 0 if none */
} h5_errinfo;

static herr_t walk_cb(unsigned n, const H5E_error2_t *e, void *data)
{
    h5_errinfo *ei = data;
    (void)n;
    if (!e->desc)
        return 0;
    /* the innermost message, skipping the plugin loader's complaints about its search path
     * (a missing filter shows as "required filter 'lzf' is not registered") */
    if (!ei->desc[0] && e->desc[0] && e->maj_num != H5E_PLUGIN) {
        snprintf(ei->desc, sizeof ei->desc, "%s", e->desc);
        ei->cut = strlen(e->desc) >= sizeof ei->desc;
    }
    /* the file driver puts the errno of a failed call in its message (H5FDsec2.c,
     * H5FD__sec2_write: "file write failed: time = ..., errno = 28, error message = ...") */
    const char *p = strstr(e->desc, "errno = ");
    if (!ei->sys_errno && p) {
        long v = strtol(p + 8, NULL, 10);
        if (v > 0 && v < 4096)
            ei->sys_errno = (int)v;
    }
    return 0;
}

/* HDF5's messages hold newlines (the driver's ctime() text) and may be long: keep one line of
 * printable text, cut at a word. */
static void one_line(char *s)
{
    char *o = s;
    for (const char *p = s; *p; p++) {
        char ch = (unsigned char)*p < 0x20 || *p == 0x7f ? ' ' : *p;
        if (ch == ' ' && (o == s || o[-1] == ' '))
            continue;
        *o++ = ch;
    }
    while (o > s && o[-1] == ' ')
        o--;
    *o = '\0';
}

/* Set err from HDF5's error stack and clear it. A failed system call becomes "cannot VERB
 * 'path': strerror" (verb NULL: never); otherwise "'path': what (hdf5 says)". */
static posenc_status h5_fail_verb(posenc_error *err, posenc_status code, const char *path,
                                  const char *verb, const char *what)
{
    h5_errinfo ei = { "", 0, 0 };
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, walk_cb, &ei);
    H5Eclear2(H5E_DEFAULT);
    if (verb && ei.sys_errno)
        return posenc_seterr(err, POSENC_EIO, "cannot %s '%s': %s", verb, path,
                             strerror(ei.sys_errno));
    one_line(ei.desc);
    if (ei.cut) { /* end at a word */
        size_t len = strlen(ei.desc);
        ei.desc[len < sizeof ei.desc - 5 ? len : sizeof ei.desc - 5] = '\0';
        char *sp = strrchr(ei.desc, ' ');
        if (sp)
            *sp = '\0';
        strcat(ei.desc, " ...");
    }
    if (ei.desc[0])
        return posenc_seterr(err, code, "'%s': %s (%s)", path, what, ei.desc);
    return posenc_seterr(err, code, "'%s': %s", path, what);
}

static posenc_status h5_fail(posenc_error *err, posenc_status code, const char *path,
                             const char *what)
{
    return h5_fail_verb(err, code, path, NULL, what);
}

/* Half (h5py's layout) or bfloat16 as a custom IEEE float in native byte order. */
static hid_t make_half(int bf16)
{
    hid_t t = H5Tcopy(H5T_NATIVE_FLOAT);
    if (t < 0)
        return -1;
    herr_t rc = bf16 ? H5Tset_fields(t, 15, 7, 8, 0, 7) : H5Tset_fields(t, 15, 10, 5, 0, 10);
    if (rc >= 0)
        rc = H5Tset_size(t, 2);
    if (rc >= 0)
        rc = H5Tset_ebias(t, bf16 ? 127 : 15);
    if (rc < 0) {
        H5Tclose(t);
        return -1;
    }
    return t;
}

/* Memory type for a posenc dtype; close it with H5Tclose. */
static hid_t mem_type(posenc_dtype dt)
{
    switch (dt) {
    case POSENC_DT_F16: return make_half(0);
    case POSENC_DT_BF16: return make_half(1);
    case POSENC_DT_F32: return H5Tcopy(H5T_NATIVE_FLOAT);
    case POSENC_DT_F64: return H5Tcopy(H5T_NATIVE_DOUBLE);
    case POSENC_DT_I32: return H5Tcopy(H5T_NATIVE_INT32);
    case POSENC_DT_I64: return H5Tcopy(H5T_NATIVE_INT64);
    case POSENC_DT_U8: return H5Tcopy(H5T_NATIVE_UINT8);
    default: return -1;
    }
}

/* File type (little-endian) for a posenc dtype; close it with H5Tclose. */
static hid_t file_type(posenc_dtype dt)
{
    hid_t t;
    switch (dt) {
    case POSENC_DT_F16:
    case POSENC_DT_BF16:
        t = make_half(dt == POSENC_DT_BF16);
        if (t >= 0 && H5Tset_order(t, H5T_ORDER_LE) < 0) {
            H5Tclose(t);
            t = -1;
        }
        return t;
    case POSENC_DT_F32: return H5Tcopy(H5T_IEEE_F32LE);
    case POSENC_DT_F64: return H5Tcopy(H5T_IEEE_F64LE);
    case POSENC_DT_I32: return H5Tcopy(H5T_STD_I32LE);
    case POSENC_DT_I64: return H5Tcopy(H5T_STD_I64LE);
    case POSENC_DT_U8: return H5Tcopy(H5T_STD_U8LE);
    default: return -1;
    }
}

/* Map a dataset's file type to a posenc dtype. Returns 0 and sets *dt, or -1 and describes the
 * type in desc. */
static int classify(hid_t ft, int assume_bf16, posenc_dtype *dt, char *desc, size_t len)
{
    H5T_class_t cls = H5Tget_class(ft);
    size_t sz = H5Tget_size(ft);
    switch (cls) {
    case H5T_FLOAT: {
        size_t spos, epos, esize, mpos, msize;
        if (H5Tget_fields(ft, &spos, &epos, &esize, &mpos, &msize) < 0)
            break;
        size_t ebias = H5Tget_ebias(ft);
        if (sz == 4 && esize == 8 && msize == 23) {
            *dt = POSENC_DT_F32;
            return 0;
        }
        if (sz == 8 && esize == 11 && msize == 52) {
            *dt = POSENC_DT_F64;
            return 0;
        }
        if (sz == 2 && spos == 15 && esize == 5 && msize == 10 && ebias == 15) {
            *dt = POSENC_DT_F16;
            return 0;
        }
        if (sz == 2 && spos == 15 && esize == 8 && msize == 7 && ebias == 127) {
            *dt = POSENC_DT_BF16;
            return 0;
        }
        snprintf(desc, len, "a %zu-byte float with %zu exponent and %zu mantissa bits", sz,
                 esize, msize);
        return -1;
    }
    case H5T_INTEGER: {
        int sgn = H5Tget_sign(ft) == H5T_SGN_2;
        if (sgn && sz == 4) {
            *dt = POSENC_DT_I32;
            return 0;
        }
        if (sgn && sz == 8) {
            *dt = POSENC_DT_I64;
            return 0;
        }
        if (!sgn && sz == 1) {
            *dt = POSENC_DT_U8;
            return 0;
        }
        snprintf(desc, len, "%s %zu-bit integers", sgn ? "signed" : "unsigned", sz * 8);
        return -1;
    }
    case H5T_OPAQUE:
        if (sz == 2 && assume_bf16) {
            *dt = POSENC_DT_BF16;
            return 0;
        }
        if (sz == 2) {
            snprintf(desc, len, "a 2-byte opaque type (pass --assume-bf16 if it is bfloat16)");
            return -1;
        }
        snprintf(desc, len, "a %zu-byte opaque type", sz);
        return -1;
    case H5T_STRING: snprintf(desc, len, "strings"); return -1;
    case H5T_COMPOUND: snprintf(desc, len, "a compound type"); return -1;
    case H5T_ENUM: snprintf(desc, len, "an enum type (h5py bool?)"); return -1;
    default: break;
    }
    snprintf(desc, len, "an unsupported type (class %d, %zu bytes)", (int)cls, sz);
    return -1;
}

/* Select the flat C-order range [start, start + n) of a simple dataspace as a union of at most
 * 2*ndim-1 hyperslabs. HDF5 iterates the union in C order, which a 1-D memory space of n elements
 * matches. */
static herr_t select_range(hid_t space, int ndim, const hsize_t *dims, const hsize_t *inner,
                           int k, hsize_t *prefix, uint64_t s, uint64_t n, int *first)
{
    hsize_t start[POSENC_MAX_DIMS], count[POSENC_MAX_DIMS];
    for (int i = 0; i < k; i++) {
        start[i] = prefix[i];
        count[i] = 1;
    }
    if (k == ndim - 1) {
        start[k] = s;
        count[k] = n;
        herr_t rc = H5Sselect_hyperslab(space, *first ? H5S_SELECT_SET : H5S_SELECT_OR, start,
                                        NULL, count, NULL);
        *first = 0;
        return rc;
    }
    uint64_t in = inner[k]; /* elements per index of axis k */
    if (s % in) {
        uint64_t off = s % in, take = in - off < n ? in - off : n;
        prefix[k] = s / in;
        if (select_range(space, ndim, dims, inner, k + 1, prefix, off, take, first) < 0)
            return -1;
        s += take;
        n -= take;
    }
    if (n >= in) {
        start[k] = s / in;
        count[k] = n / in;
        for (int i = k + 1; i < ndim; i++) {
            start[i] = 0;
            count[i] = dims[i];
        }
        if (H5Sselect_hyperslab(space, *first ? H5S_SELECT_SET : H5S_SELECT_OR, start, NULL,
                                count, NULL) < 0)
            return -1;
        *first = 0;
        s += (n / in) * in;
        n %= in;
    }
    if (n > 0) {
        prefix[k] = s / in;
        return select_range(space, ndim, dims, inner, k + 1, prefix, 0, n, first);
    }
    return 0;
}

typedef struct h5_span {
    int ndim;
    hsize_t dims[POSENC_MAX_DIMS];
    hsize_t inner[POSENC_MAX_DIMS]; /* product of dims after axis k */
} h5_span;

static void span_init(h5_span *sp, int ndim, const hsize_t *dims)
{
    sp->ndim = ndim;
    hsize_t p = 1;
    for (int k = ndim - 1; k >= 0; k--) {
        sp->dims[k] = dims[k];
        sp->inner[k] = p;
        p *= dims[k];
    }
}

/* Transfer elements [pos, pos + n) of dset between buf and the file. */
static herr_t xfer(hid_t dset, hid_t mtype, const h5_span *sp, uint64_t pos, uint64_t n,
                   void *buf, int writing)
{
    hid_t fspace = -1, mspace = -1;
    herr_t rc = -1;
    if (sp->ndim == 0) {
        fspace = H5Screate(H5S_SCALAR);
        mspace = H5Screate(H5S_SCALAR);
    } else {
        hsize_t prefix[POSENC_MAX_DIMS];
        hsize_t cnt = n;
        int first = 1;
        fspace = H5Screate_simple(sp->ndim, sp->dims, NULL);
        if (fspace < 0 ||
            select_range(fspace, sp->ndim, sp->dims, sp->inner, 0, prefix, pos, n, &first) < 0)
            goto out;
        mspace = H5Screate_simple(1, &cnt, NULL);
    }
    if (fspace < 0 || mspace < 0)
        goto out;
    rc = writing ? H5Dwrite(dset, mtype, mspace, fspace, H5P_DEFAULT, buf)
                 : H5Dread(dset, mtype, mspace, fspace, H5P_DEFAULT, buf);
out:;
    /* keep the failure's error stack across the cleanup calls, for h5_fail */
    hid_t saved = rc < 0 ? H5Eget_current_stack() : -1;
    if (fspace >= 0)
        H5Sclose(fspace);
    if (mspace >= 0)
        H5Sclose(mspace);
    if (saved >= 0)
        H5Eset_current_stack(saved);
    return rc;
}

/* ---------------------------------------------------------------- reading */

typedef struct h5_file {
    hid_t file;
    char **paths; /* dataset path of each array (without the leading '/') */
} h5_file;

typedef struct h5_reader {
    hid_t dset, mtype;
    h5_span span;
    uint64_t pos;
} h5_reader;

typedef struct visit_state {
    posenc_container *c;
    h5_file *hf;
    size_t cap;
    int assume_bf16;
    posenc_status st;
    posenc_error *err;
    uint64_t fsize; /* bytes in the file */
    char skipped[POSENC_NAME_MAX + 160]; /* first dataset that could not be listed, and why */
} visit_state;

/* Declared data a file does not hold up to this many bytes per dataset are read (fill values
 * of an unwritten dataset, unwritten chunks); beyond it the dataset is refused. */
#define H5_FILL_SLACK ((uint64_t)1 << 20)
/* deflate's largest expansion: a 258-byte match per 2 bits (zlib's zlib.h, about 1032:1) */
#define H5_DEFLATE_RATIO 1032u

static uint64_t sat_mul(uint64_t a, uint64_t b)
{
    return a && b > UINT64_MAX / a ? UINT64_MAX : a * b;
}

/* Check what dataset d (of type ft and extent dims) declares against what the file holds, so
 * that a small file cannot make a reader produce terabytes: contiguous data must lie inside the
 * file; data not stored (an unwritten dataset, unallocated chunks: HDF5 returns fill values)
 * may exceed what the file holds by H5_FILL_SLACK at most; chunked data are bounded by the
 * allocated chunks (H5Dget_num_chunks times the chunk size) and, when deflate is the only
 * compressing filter, by deflate's ratio times H5Dget_storage_size, which must itself fit in
 * the file (and, without a compressing filter, cover the allocated chunks whole); compact
 * data must be whole in the object header. External and virtual storage (data in
 * other files) are not read. Returns 0 (fine), 1 (not listed: why says it) or -1 (vs->st is
 * set: the file is refused). */
static int storage_check(hid_t d, hid_t ft, hid_t space, int nd, const hsize_t *dims,
                         visit_state *vs, const char *name, char *why, size_t len)
{
    uint64_t nelem = 1, es = H5Tget_size(ft);
    for (int i = 0; i < nd; i++)
        nelem = sat_mul(nelem, dims[i]);
    uint64_t bytes = sat_mul(nelem, es);
    if (bytes == 0)
        return 0;
    const char *path = vs->c->path;
    hid_t dcpl = H5Dget_create_plist(d);
    if (dcpl < 0) {
        vs->st = h5_fail(vs->err, POSENC_EFORMAT, path, "cannot read a dataset's layout");
        return -1;
    }
    int rc = 0;
    uint64_t held = 0; /* bytes of the dataset the file can supply */
    H5D_layout_t layout = H5Pget_layout(dcpl);
    if (H5Pget_external_count(dcpl) > 0) {
        snprintf(why, len, "its data in external files");
        rc = 1;
    } else if (layout == H5D_VIRTUAL) {
        snprintf(why, len, "a virtual layout (data in other files)");
        rc = 1;
    } else if (layout == H5D_CONTIGUOUS) {
        haddr_t addr = H5Dget_offset(d); /* from the start of the file, user block included */
        if (addr != HADDR_UNDEF && (addr > vs->fsize || bytes > vs->fsize - addr)) {
            vs->st = posenc_seterr(vs->err, POSENC_EFORMAT,
                                   "'%s': dataset '/%.200s' needs %" PRIu64 " bytes at offset %"
                                   PRIu64 ", past the end of the file (%" PRIu64 " bytes)",
                                   path, name, bytes, (uint64_t)addr, vs->fsize);
            rc = -1;
        }
        held = addr != HADDR_UNDEF ? bytes : 0; /* never written: fill values only */
    } else if (layout == H5D_CHUNKED) {
        hsize_t chunk[H5S_MAX_RANK], nchunks = 0;
        int cnd = H5Pget_chunk(dcpl, H5S_MAX_RANK, chunk);
        hsize_t stored = H5Dget_storage_size(d);
        hsize_t maxdims[H5S_MAX_RANK];
        int bad_chunk = cnd != nd || H5Sget_simple_extent_dims(space, NULL, maxdims) < 0;
        /* a chunk larger than a fixed extent cannot be created (H5Pset_chunk refuses it), and
         * libhdf5 reads past the buffer of such a chunk (found by fuzz_hdf5) */
        for (int i = 0; i < nd && !bad_chunk; i++)
            bad_chunk = chunk[i] == 0 || (maxdims[i] != H5S_UNLIMITED && chunk[i] > maxdims[i]);
        if (bad_chunk) {
            vs->st = posenc_seterr(vs->err, POSENC_EFORMAT,
                                   "'%s': dataset '/%.200s' has chunks that do not fit its "
                                   "shape", path, name);
            rc = -1;
        } else if (H5Dget_num_chunks(d, space, &nchunks) < 0) {
            vs->st = h5_fail(vs->err, POSENC_EFORMAT, path, "cannot read a dataset's chunks");
            rc = -1;
        } else if (stored > vs->fsize) {
            vs->st = posenc_seterr(vs->err, POSENC_EFORMAT,
                                   "'%s': dataset '/%.200s' claims %" PRIu64 " bytes of chunks "
                                   "in a file of %" PRIu64 " bytes", path, name,
                                   (uint64_t)stored, vs->fsize);
            rc = -1;
        } else {
            uint64_t cbytes = es;
            for (int i = 0; i < cnd; i++)
                cbytes = sat_mul(cbytes, chunk[i]);
            held = sat_mul(nchunks, cbytes);
            /* filters: shuffle and fletcher32 do not compress, deflate by at most its ratio;
             * another (lzf, szip, scale-offset, a plugin) leaves the chunk count as the bound */
            int nf = H5Pget_nfilters(dcpl), known = nf >= 0, compressing = nf < 0;
            for (int i = 0; i < nf; i++) {
                unsigned flags = 0, cd[8];
                size_t ncd = 8;
                H5Z_filter_t f = H5Pget_filter2(dcpl, (unsigned)i, &flags, &ncd, cd, 0, NULL,
                                                NULL);
                if (f != H5Z_FILTER_SHUFFLE && f != H5Z_FILTER_FLETCHER32)
                    compressing = 1;
                if (f != H5Z_FILTER_SHUFFLE && f != H5Z_FILTER_FLETCHER32 &&
                    f != H5Z_FILTER_DEFLATE)
                    known = 0;
            }
            if (!compressing && stored < held) {
                /* chunks that are not compressed are stored whole: libhdf5 copies a whole
                 * chunk out of a shorter one (a heap overflow in H5VM_memcpyvv, found by
                 * fuzz_hdf5) */
                vs->st = posenc_seterr(vs->err, POSENC_EFORMAT,
                                       "'%s': dataset '/%.200s' stores %" PRIu64 " bytes in %"
                                       PRIu64 " uncompressed chunks of %" PRIu64 " bytes", path,
                                       name, (uint64_t)stored, (uint64_t)nchunks, cbytes);
                rc = -1;
            } else if (known && compressing) {
                uint64_t b = sat_mul(stored, H5_DEFLATE_RATIO);
                if (b < held)
                    held = b;
            }
        }
    } else if (layout != H5D_COMPACT) {
        snprintf(why, len, "an unknown storage layout (%d)", (int)layout);
        rc = 1;
    } else {
        held = H5Dget_storage_size(d); /* compact: the size in the object header */
        if (held < bytes) { /* read past by libhdf5 otherwise: no slack */
            vs->st = posenc_seterr(vs->err, POSENC_EFORMAT,
                                   "'%s': dataset '/%.200s' declares %" PRIu64 " bytes but its "
                                   "compact storage holds %" PRIu64, path, name, bytes, held);
            rc = -1;
        }
    }
    if (rc == 0 && bytes > held && bytes - held > H5_FILL_SLACK) {
        vs->st = posenc_seterr(vs->err, POSENC_EFORMAT,
                               "'%s': dataset '/%.200s' declares %" PRIu64 " bytes, but the file "
                               "(%" PRIu64 " bytes) holds at most %" PRIu64 " of them (the rest "
                               "was never written)", path, name, bytes, vs->fsize, held);
        rc = -1;
    }
    H5Pclose(dcpl);
    H5Eclear2(H5E_DEFAULT);
    return rc;
}

static herr_t visit_cb(hid_t obj, const char *name, const H5O_info_t *info, void *data)
{
    visit_state *vs = data;
    if (info->type != H5O_TYPE_DATASET)
        return 0;
    hid_t d = H5Dopen2(obj, name, H5P_DEFAULT);
    if (d < 0) {
        vs->st = h5_fail(vs->err, POSENC_EFORMAT, vs->c->path, "cannot open a dataset");
        return -1;
    }
    hid_t ft = H5Dget_type(d), sp = H5Dget_space(d);
    posenc_array_info a;
    memset(&a, 0, sizeof a);
    char why[160] = "";
    int nd = sp >= 0 ? H5Sget_simple_extent_ndims(sp) : -1;
    H5S_class_t scls = sp >= 0 ? H5Sget_simple_extent_type(sp) : H5S_NO_CLASS;
    if (ft < 0 || nd < 0) {
        snprintf(why, sizeof why, "unreadable type or shape");
    } else if (scls == H5S_NULL) {
        snprintf(why, sizeof why, "an empty (null) dataspace");
    } else if (nd > POSENC_MAX_DIMS) {
        snprintf(why, sizeof why, "%d dimensions (at most %d)", nd, POSENC_MAX_DIMS);
    } else if (strlen(name) + 1 >= POSENC_NAME_MAX) {
        snprintf(why, sizeof why, "a path longer than %d bytes", POSENC_NAME_MAX - 1);
    } else if (classify(ft, vs->assume_bf16, &a.dtype, why, sizeof why) == 0) {
        hsize_t dims[POSENC_MAX_DIMS];
        H5Sget_simple_extent_dims(sp, dims, NULL);
        why[0] = '\0';
        int sc = storage_check(d, ft, sp, nd, dims, vs, name, why, sizeof why);
        if (sc < 0) {
            H5Tclose(ft);
            H5Sclose(sp);
            H5Dclose(d);
            H5Eclear2(H5E_DEFAULT);
            return -1;
        }
        a.ndim = nd;
        for (int i = 0; i < nd; i++)
            a.shape[i] = (int64_t)dims[i];
        snprintf(a.name, sizeof a.name, "/%s", name);
    } else if (!why[0]) {
        snprintf(why, sizeof why, "an unsupported type");
    }
    if (ft >= 0)
        H5Tclose(ft);
    if (sp >= 0)
        H5Sclose(sp);
    H5Dclose(d);
    H5Eclear2(H5E_DEFAULT);
    if (why[0]) {
        if (!vs->skipped[0])
            snprintf(vs->skipped, sizeof vs->skipped, "dataset '/%.200s' has %s", name, why);
        return 0;
    }
    posenc_container *c = vs->c;
    if (c->n == vs->cap) {
        size_t cap = vs->cap ? vs->cap * 2 : 8;
        posenc_array_info *na = realloc(c->arrays, cap * sizeof *na);
        if (na)
            c->arrays = na;
        char **np = na ? realloc(vs->hf->paths, cap * sizeof *np) : NULL;
        if (np)
            vs->hf->paths = np;
        if (!na || !np) {
            vs->st = posenc_seterr(vs->err, POSENC_ENOMEM, "out of memory");
            return -1;
        }
        vs->cap = cap;
    }
    vs->hf->paths[c->n] = strdup(name);
    if (!vs->hf->paths[c->n]) {
        vs->st = posenc_seterr(vs->err, POSENC_ENOMEM, "out of memory");
        return -1;
    }
    c->arrays[c->n++] = a;
    return 0;
}

/* Whether t is h5py's bool: an enum of two members FALSE = 0 and TRUE = 1 over a 1-byte
 * integer. */
static int is_h5py_bool(hid_t t)
{
    if (H5Tget_nmembers(t) != 2 || H5Tget_size(t) != 1)
        return 0;
    int ok = 1;
    for (unsigned k = 0; k < 2 && ok; k++) {
        int8_t val = -1;
        char *name = H5Tget_member_name(t, k);
        ok = name && H5Tget_member_value(t, k, &val) >= 0 &&
             strcmp(name, val ? "TRUE" : "FALSE") == 0 && (val == 0 || val == 1);
        if (name)
            H5free_memory(name);
    }
    return ok;
}

/* Root attributes as one JSON object. */
static cJSON *attr_value(hid_t attr)
{
    cJSON *v = NULL;
    hid_t t = H5Aget_type(attr), sp = H5Aget_space(attr);
    if (t < 0 || sp < 0)
        goto out;
    hssize_t npts = H5Sget_simple_extent_npoints(sp);
    int nd = H5Sget_simple_extent_ndims(sp);
    H5T_class_t cls = H5Tget_class(t);
    if (H5Sget_simple_extent_type(sp) == H5S_NULL) {
        v = cJSON_CreateNull(); /* an attribute without a value (h5py.Empty): JSON null */
    } else if (cls == H5T_STRING && npts >= 1 && npts <= H5_MAX_ATTR_ELEMS) {
        /* a scalar string is a JSON text or plain text; a 1-D one an array of strings */
        char **texts = calloc((size_t)npts, sizeof *texts);
        int ok = texts != NULL;
        if (ok && H5Tis_variable_str(t) > 0) {
            hid_t mt = H5Tcopy(H5T_C_S1);
            char **s = calloc((size_t)npts, sizeof *s);
            ok = s && mt >= 0 && H5Tset_size(mt, H5T_VARIABLE) >= 0 &&
                 H5Tset_cset(mt, H5Tget_cset(t)) >= 0 && H5Aread(attr, mt, s) >= 0;
            for (hssize_t k = 0; s && k < npts; k++) {
                if (ok && !(texts[k] = strdup(s[k] ? s[k] : "")))
                    ok = 0;
                if (s[k])
                    H5free_memory(s[k]);
            }
            free(s);
            if (mt >= 0)
                H5Tclose(mt);
        } else if (ok) {
            size_t sz = H5Tget_size(t);
            hid_t mt = H5Tcopy(t);
            char *all = sz < (1u << 24) / (size_t)npts ? calloc((size_t)npts, sz) : NULL;
            ok = all && mt >= 0 && H5Aread(attr, mt, all) >= 0;
            for (hssize_t k = 0; ok && k < npts; k++) {
                if (!(texts[k] = calloc(1, sz + 1)))
                    ok = 0;
                else
                    memcpy(texts[k], all + (size_t)k * sz, sz);
            }
            free(all);
            if (mt >= 0)
                H5Tclose(mt);
        }
        if (ok && nd == 0) {
            const char *end = NULL;
            v = cJSON_ParseWithOpts(texts[0], &end, 1);
            if (!v)
                v = cJSON_CreateString(texts[0]);
        } else if (ok) {
            v = cJSON_CreateStringArray((const char *const *)texts, (int)npts);
        }
        for (hssize_t k = 0; texts && k < npts; k++)
            free(texts[k]);
        free(texts);
    } else if (cls == H5T_ENUM && npts >= 1 && npts <= H5_MAX_ATTR_ELEMS && is_h5py_bool(t)) {
        /* h5py's bool: enum {FALSE = 0, TRUE = 1} */
        int8_t *vals = malloc((size_t)npts);
        hid_t mt = H5Tget_native_type(t, H5T_DIR_ASCEND); /* the enum itself, 1 byte */
        if (vals && mt >= 0 && H5Aread(attr, mt, vals) >= 0) {
            if (nd == 0) {
                v = cJSON_CreateBool(vals[0] != 0);
            } else if ((v = cJSON_CreateArray())) {
                for (hssize_t k = 0; k < npts; k++)
                    cJSON_AddItemToArray(v, cJSON_CreateBool(vals[k] != 0));
            }
        }
        if (mt >= 0)
            H5Tclose(mt);
        free(vals);
    } else if ((cls == H5T_INTEGER || cls == H5T_FLOAT) && npts >= 1 &&
               npts <= H5_MAX_ATTR_ELEMS) {
        double *vals = malloc((size_t)npts * sizeof *vals);
        if (vals && H5Aread(attr, H5T_NATIVE_DOUBLE, vals) >= 0) {
            if (nd == 0)
                v = cJSON_CreateNumber(vals[0]);
            else
                v = cJSON_CreateDoubleArray(vals, (int)npts);
        }
        free(vals);
    }
out:
    if (t >= 0)
        H5Tclose(t);
    if (sp >= 0)
        H5Sclose(sp);
    return v;
}

static herr_t attr_cb(hid_t loc, const char *name, const H5A_info_t *info, void *data)
{
    (void)info;
    cJSON *obj = data;
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
    if (a < 0)
        return 0;
    cJSON *v = attr_value(a);
    H5Aclose(a);
    if (v)
        cJSON_AddItemToObject(obj, name, v);
    return 0;
}

static void h5_close(posenc_container *c)
{
    h5_quiet();
    h5_file *hf = c->impl;
    if (!hf)
        return;
    if (hf->paths)
        for (size_t i = 0; i < c->n; i++)
            free(hf->paths[i]);
    free(hf->paths);
    if (hf->file >= 0)
        H5Fclose(hf->file);
    free(hf);
    c->impl = NULL;
}

static posenc_status h5_open(posenc_container *c, posenc_error *err)
{
    h5_quiet();
    struct stat sb;
    if (stat(c->path, &sb) != 0)
        return posenc_seterr(err, POSENC_EIO, "cannot open '%s': %s", c->path, strerror(errno));
    if (H5Fis_hdf5(c->path) <= 0) {
        H5Eclear2(H5E_DEFAULT);
        return posenc_seterr(err, POSENC_EFORMAT, "'%s': not an HDF5 file", c->path);
    }
    h5_file *hf = calloc(1, sizeof *hf);
    if (!hf)
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    hf->file = H5Fopen(c->path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (hf->file < 0) {
        free(hf);
        return h5_fail_verb(err, POSENC_EFORMAT, c->path, "open", "cannot open HDF5 file");
    }
    c->impl = hf;
    c->n = 0;
    c->arrays = NULL;
    visit_state vs = { .c = c, .hf = hf, .assume_bf16 = c->opts.assume_bf16, .err = err,
                       .fsize = (uint64_t)sb.st_size };
    posenc_status st = POSENC_OK;
    /* creation order when every group tracks it (posenc's files), else by name (h5py's) */
    herr_t vrc = H5Ovisit(hf->file, H5_INDEX_CRT_ORDER, H5_ITER_INC, visit_cb, &vs);
    if (vrc < 0 && vs.st == POSENC_OK) {
        H5Eclear2(H5E_DEFAULT);
        for (size_t i = 0; i < c->n; i++)
            free(hf->paths[i]);
        c->n = 0;
        vs.skipped[0] = '\0';
        vrc = H5Ovisit(hf->file, H5_INDEX_NAME, H5_ITER_INC, visit_cb, &vs);
    }
    if (vrc < 0)
        st = vs.st != POSENC_OK ? vs.st
                                : h5_fail(err, POSENC_EFORMAT, c->path, "cannot list datasets");
    else if (c->n == 0 && vs.skipped[0])
        st = posenc_seterr(err, POSENC_EUNSUPPORTED, "'%s': %s", c->path, vs.skipped);
    if (st != POSENC_OK) {
        h5_close(c);
        free(c->arrays);
        c->arrays = NULL;
        c->n = 0;
        return st;
    }
    cJSON *meta = cJSON_CreateObject();
    if (meta) {
        hsize_t idx = 0;
        if (H5Aiterate2(hf->file, H5_INDEX_CRT_ORDER, H5_ITER_INC, &idx, attr_cb, meta) < 0) {
            H5Eclear2(H5E_DEFAULT);
            cJSON_Delete(meta);
            meta = cJSON_CreateObject();
            idx = 0;
            if (meta)
                H5Aiterate2(hf->file, H5_INDEX_NAME, H5_ITER_INC, &idx, attr_cb, meta);
        }
        H5Eclear2(H5E_DEFAULT);
        if (meta->child)
            c->meta = cJSON_PrintUnformatted(meta);
        cJSON_Delete(meta);
    }
    return POSENC_OK;
}

static posenc_status h5_reader_open(posenc_reader *r, posenc_error *err)
{
    h5_quiet();
    h5_file *hf = r->c->impl;
    h5_reader *hr = calloc(1, sizeof *hr);
    if (!hr)
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    hr->dset = hr->mtype = -1;
    hid_t dapl = H5Pcreate(H5P_DATASET_ACCESS);
    if (dapl >= 0)
        H5Pset_chunk_cache(dapl, 1031, H5_CACHE_BYTES, 1.0);
    hr->dset = H5Dopen2(hf->file, hf->paths[r->index], dapl >= 0 ? dapl : H5P_DEFAULT);
    if (dapl >= 0)
        H5Pclose(dapl);
    if (hr->dset < 0) {
        free(hr);
        return h5_fail(err, POSENC_EFORMAT, r->c->path, "cannot open dataset");
    }
    if (r->info.dtype == POSENC_DT_BF16) {
        /* a custom bf16 float, or a 2-byte opaque type read as is */
        hid_t ft = H5Dget_type(hr->dset);
        hr->mtype = H5Tget_class(ft) == H5T_OPAQUE ? H5Tcopy(ft) : make_half(1);
        H5Tclose(ft);
    } else {
        hr->mtype = mem_type(r->info.dtype);
    }
    if (hr->mtype < 0) {
        H5Dclose(hr->dset);
        free(hr);
        return h5_fail(err, POSENC_EFORMAT, r->c->path, "cannot build a memory type");
    }
    hsize_t dims[POSENC_MAX_DIMS];
    for (int i = 0; i < r->info.ndim; i++)
        dims[i] = (hsize_t)r->info.shape[i];
    span_init(&hr->span, r->info.ndim, dims);
    r->impl = hr;
    return POSENC_OK;
}

static posenc_status h5_read(posenc_reader *r, void *buf, uint64_t nelem, posenc_error *err)
{
    h5_reader *hr = r->impl;
    if (nelem == 0)
        return POSENC_OK;
    h5_quiet();
    if (nelem > r->nelem || hr->pos > r->nelem - nelem)
        return posenc_seterr(err, POSENC_EFORMAT, "'%s': read past the end of '%s'", r->c->path,
                             r->info.name);
    if (xfer(hr->dset, hr->mtype, &hr->span, hr->pos, nelem, buf, 0) < 0) {
        char what[POSENC_NAME_MAX + 32];
        snprintf(what, sizeof what, "cannot read dataset '%s'", r->info.name);
        return h5_fail_verb(err, POSENC_EFORMAT, r->c->path, "read", what);
    }
    hr->pos += nelem;
    return POSENC_OK;
}

static void h5_reader_close(posenc_reader *r)
{
    h5_quiet();
    h5_reader *hr = r->impl;
    if (hr) {
        if (hr->mtype >= 0)
            H5Tclose(hr->mtype);
        if (hr->dset >= 0)
            H5Dclose(hr->dset);
        free(hr);
    }
    r->impl = NULL;
}

/* ---------------------------------------------------------------- writing */

/* posenc's file driver for writing: the POSIX calls of libhdf5's sec2 driver (H5FDsec2.c),
 * except that a failed write or truncate is recorded in the writer instead of being returned
 * to the library. libhdf5 1.10 does not survive a failed write inside a flush: the metadata
 * cache keeps its skip list enabled (H5C_set_slist_enabled: "slist already enabled?"), every
 * later flush fails, H5Fclose then frees the file but keeps its id, and the atexit handler
 * (H5_term_library -> H5F__close_cb) crashes on the freed file; a failed H5Dclose leaves a
 * dataset the same way, and a failed superblock write in H5Fcreate leaves a half-built file
 * that makes the handler report "HDF5: infinite loop closing library". With the error kept
 * here every call into the library succeeds and every id closes; the writer checks the
 * record after each call, reports the errno and discards the temporary. Once a write has
 * failed, or the file is being discarded, writes are dropped. */
typedef struct h5drv_state {
    int err;     /* errno of the first failed system call, 0 if none */
    int discard; /* drop every write: the file is being thrown away */
} h5drv_state;

typedef struct h5drv_fapl {
    h5drv_state *state;
} h5drv_fapl;

typedef struct h5drv_file {
    H5FD_t pub; /* first: the library's view */
    int fd;
    h5drv_state *state;
    haddr_t eoa, eof;
    dev_t dev;
    ino_t ino;
} h5drv_file;

#define H5DRV_MAXADDR ((haddr_t)INT64_MAX) /* off_t's range, as sec2 */

static void *h5drv_fapl_copy(const void *old)
{
    h5drv_fapl *fa = malloc(sizeof *fa);
    if (fa)
        *fa = *(const h5drv_fapl *)old;
    return fa;
}

static void *h5drv_fapl_get(H5FD_t *file)
{
    h5drv_fapl fa = { ((h5drv_file *)file)->state };
    return h5drv_fapl_copy(&fa);
}

static herr_t h5drv_fapl_free(void *fa)
{
    free(fa);
    return 0;
}

static H5FD_t *h5drv_open(const char *name, unsigned flags, hid_t fapl, haddr_t maxaddr)
{
    const h5drv_fapl *fa = H5Pget_driver_info(fapl);
    if (!fa || !fa->state || !name || maxaddr == 0 || maxaddr > H5DRV_MAXADDR)
        return NULL;
    int o = (flags & H5F_ACC_RDWR ? O_RDWR : O_RDONLY) | O_CLOEXEC;
    if (flags & H5F_ACC_TRUNC)
        o |= O_TRUNC;
    if (flags & H5F_ACC_CREAT)
        o |= O_CREAT;
    if (flags & H5F_ACC_EXCL)
        o |= O_EXCL;
    struct stat sb;
    h5drv_file *f = calloc(1, sizeof *f);
    int fd = f ? open(name, o, 0666) : -1;
    if (fd < 0 || fstat(fd, &sb) != 0) {
        if (!fa->state->err)
            fa->state->err = f ? errno : ENOMEM;
        if (fd >= 0)
            close(fd);
        free(f);
        return NULL;
    }
    f->fd = fd;
    f->state = fa->state;
    f->eof = (haddr_t)sb.st_size;
    f->dev = sb.st_dev;
    f->ino = sb.st_ino;
    return &f->pub;
}

static herr_t h5drv_close(H5FD_t *file)
{
    h5drv_file *f = (h5drv_file *)file;
    /* some file systems (NFS) report a failed write only here */
    if (close(f->fd) != 0 && !f->state->err && !f->state->discard)
        f->state->err = errno;
    free(f);
    return 0;
}

static int h5drv_cmp(const H5FD_t *a, const H5FD_t *b)
{
    const h5drv_file *x = (const h5drv_file *)a, *y = (const h5drv_file *)b;
    if (x->dev != y->dev)
        return x->dev < y->dev ? -1 : 1;
    if (x->ino != y->ino)
        return x->ino < y->ino ? -1 : 1;
    return 0;
}

static herr_t h5drv_query(const H5FD_t *file, unsigned long *flags)
{
    (void)file;
    *flags = H5FD_FEAT_AGGREGATE_METADATA | H5FD_FEAT_ACCUMULATE_METADATA |
             H5FD_FEAT_DATA_SIEVE | H5FD_FEAT_AGGREGATE_SMALLDATA |
             H5FD_FEAT_POSIX_COMPAT_HANDLE;
    return 0;
}

static haddr_t h5drv_get_eoa(const H5FD_t *file, H5FD_mem_t type)
{
    (void)type;
    return ((const h5drv_file *)file)->eoa;
}

static herr_t h5drv_set_eoa(H5FD_t *file, H5FD_mem_t type, haddr_t addr)
{
    (void)type;
    if (addr > H5DRV_MAXADDR)
        return -1;
    ((h5drv_file *)file)->eoa = addr;
    return 0;
}

static haddr_t h5drv_get_eof(const H5FD_t *file, H5FD_mem_t type)
{
    (void)type;
    return ((const h5drv_file *)file)->eof;
}

static herr_t h5drv_get_handle(H5FD_t *file, hid_t fapl, void **handle)
{
    (void)fapl;
    *handle = &((h5drv_file *)file)->fd;
    return 0;
}

static herr_t h5drv_read(H5FD_t *file, H5FD_mem_t type, hid_t dxpl, haddr_t addr, size_t size,
                         void *buf)
{
    h5drv_file *f = (h5drv_file *)file;
    unsigned char *p = buf;
    (void)type;
    (void)dxpl;
    if (addr > f->eoa || size > f->eoa - addr)
        return -1;
    while (size > 0) {
        ssize_t k = pread(f->fd, p, size, (off_t)addr);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0) {
            if (!f->state->err)
                f->state->err = errno;
            return -1;
        }
        if (k == 0) { /* past the end of the file: zeros, as sec2 */
            memset(p, 0, size);
            break;
        }
        p += k;
        addr += (haddr_t)k;
        size -= (size_t)k;
    }
    return 0;
}

static herr_t h5drv_write(H5FD_t *file, H5FD_mem_t type, hid_t dxpl, haddr_t addr, size_t size,
                          const void *buf)
{
    h5drv_file *f = (h5drv_file *)file;
    const unsigned char *p = buf;
    (void)type;
    (void)dxpl;
    if (addr > f->eoa || size > f->eoa - addr)
        return -1;
    haddr_t end = addr + size;
    while (size > 0 && !f->state->err && !f->state->discard) {
        ssize_t k = pwrite(f->fd, p, size, (off_t)addr);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            f->state->err = k < 0 ? errno : ENOSPC;
            break;
        }
        p += k;
        addr += (haddr_t)k;
        size -= (size_t)k;
    }
    if (end > f->eof)
        f->eof = end;
    return 0;
}

static herr_t h5drv_truncate(H5FD_t *file, hid_t dxpl, hbool_t closing)
{
    h5drv_file *f = (h5drv_file *)file;
    (void)dxpl;
    (void)closing;
    if (f->eoa != f->eof && !f->state->err && !f->state->discard &&
        ftruncate(f->fd, (off_t)f->eoa) != 0)
        f->state->err = errno;
    f->eof = f->eoa;
    return 0;
}

static const H5FD_class_t h5drv_class = {
#if H5_VERSION_GE(1, 13, 2)
    /* untested: 1.14 versions the class and wants a driver value (256-511: not registered) */
    .version = H5FD_CLASS_VERSION,
    .value = 511,
#endif
    .name = "posenc-writer",
    .maxaddr = H5DRV_MAXADDR,
    .fc_degree = H5F_CLOSE_WEAK,
    .fapl_size = sizeof(h5drv_fapl),
    .fapl_get = h5drv_fapl_get,
    .fapl_copy = h5drv_fapl_copy,
    .fapl_free = h5drv_fapl_free,
    .open = h5drv_open,
    .close = h5drv_close,
    .cmp = h5drv_cmp,
    .query = h5drv_query,
    .get_eoa = h5drv_get_eoa,
    .set_eoa = h5drv_set_eoa,
    .get_eof = h5drv_get_eof,
    .get_handle = h5drv_get_handle,
    .read = h5drv_read,
    .write = h5drv_write,
    .truncate = h5drv_truncate,
    .fl_map = H5FD_FLMAP_DICHOTOMY,
};

/* The driver's id, registered on first use (and again after an H5close). */
static hid_t h5drv_id(void)
{
    static hid_t id = H5I_INVALID_HID;
    if (id < 0 || H5Iis_valid(id) <= 0)
        id = H5FDregister(&h5drv_class);
    return id;
}

typedef struct h5_writer {
    char *tmp;    /* the temporary the file is built in */
    char *target; /* where it goes on commit: the output path, or the file its symlink names */
    hid_t file;
    h5drv_state io; /* the driver's record of failed system calls */
    hid_t *dsets, *mtypes;
    h5_span *spans;
    size_t cur;
    uint64_t done;
} h5_writer;

/* Close every id of the writer and free it; remove_tmp: the file is discarded (the driver
 * drops what the closes would write) and its temporary removed. */
static void h5_writer_free(posenc_writer *w, int remove_tmp)
{
    h5_quiet();
    h5_writer *hw = w->impl;
    if (!hw)
        return;
    if (remove_tmp)
        hw->io.discard = 1;
    for (size_t i = 0; i < w->n; i++) {
        if (hw->dsets && hw->dsets[i] >= 0)
            H5Dclose(hw->dsets[i]);
        if (hw->mtypes && hw->mtypes[i] >= 0)
            H5Tclose(hw->mtypes[i]);
    }
    if (hw->file >= 0)
        H5Fclose(hw->file);
    H5Eclear2(H5E_DEFAULT);
    if (remove_tmp && hw->tmp)
        pe_tmp_discard(NULL, hw->tmp);
    free(hw->tmp);
    free(hw->target);
    free(hw->dsets);
    free(hw->mtypes);
    free(hw->spans);
    free(hw);
    w->impl = NULL;
}

/* A failed call of the writer: "cannot write 'x.h5': No space left on device" when a system
 * call failed (the driver's record), else "'x.h5': what (hdf5 says)". */
static posenc_status h5_w_fail(posenc_writer *w, posenc_error *err, const char *what)
{
    h5_writer *hw = w->impl;
    if (hw && hw->io.err > 0) {
        H5Eclear2(H5E_DEFAULT);
        return posenc_seterr(err, POSENC_EIO, "cannot write '%s': %s", w->path,
                             strerror(hw->io.err));
    }
    return h5_fail_verb(err, POSENC_EIO, w->path, "write", what);
}

/* After a call that succeeded: did a system call fail inside it? */
static posenc_status h5_w_check(posenc_writer *w, posenc_error *err)
{
    h5_writer *hw = w->impl;
    if (hw && hw->io.err > 0)
        return h5_w_fail(w, err, "");
    return POSENC_OK;
}

/* Chunk shape of about H5_CHUNK_BYTES: whole trailing axes, split along the leading ones. */
static void chunk_dims(int ndim, const hsize_t *dims, size_t es, hsize_t *chunk)
{
    for (int k = 0; k < ndim; k++)
        chunk[k] = dims[k];
    for (int k = 0; k < ndim; k++) {
        uint64_t slice = es; /* bytes of one index along axis k */
        for (int i = k + 1; i < ndim; i++)
            slice *= dims[i];
        if (slice <= H5_CHUNK_BYTES) {
            uint64_t n = H5_CHUNK_BYTES / slice;
            chunk[k] = n < dims[k] ? n : dims[k];
            if (chunk[k] == 0)
                chunk[k] = 1;
            return;
        }
        chunk[k] = 1;
    }
}

/* Create the missing groups on the way to name ("a/b/c" -> a, a/b), tracking creation order. */
static herr_t make_groups(hid_t file, const char *name)
{
    char path[POSENC_NAME_MAX];
    snprintf(path, sizeof path, "%s", name);
    for (char *p = strchr(path, '/'); p; p = strchr(p + 1, '/')) {
        *p = '\0';
        htri_t ex = path[0] ? H5Lexists(file, path, H5P_DEFAULT) : 1;
        if (ex < 0)
            return -1;
        if (!ex) {
            hid_t gcpl = H5Pcreate(H5P_GROUP_CREATE);
            if (gcpl < 0)
                return -1;
            H5Pset_link_creation_order(gcpl, H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED);
            H5Pset_obj_track_times(gcpl, 0); /* no timestamps: the same run gives the same bytes */
            hid_t g = H5Gcreate2(file, path, H5P_DEFAULT, gcpl, H5P_DEFAULT);
            H5Pclose(gcpl);
            if (g < 0)
                return -1;
            H5Gclose(g);
        }
        *p = '/';
    }
    return 0;
}

static posenc_status create_dataset(posenc_writer *w, h5_writer *hw, size_t i, posenc_error *err)
{
    const posenc_array_info *a = &w->arrays[i];
    const char *name = a->name;
    while (*name == '/')
        name++;
    if (!*name)
        name = "data";
    hsize_t dims[POSENC_MAX_DIMS];
    for (int k = 0; k < a->ndim; k++)
        dims[k] = (hsize_t)a->shape[k];
    span_init(&hw->spans[i], a->ndim, dims);
    posenc_status st = POSENC_OK;
    hid_t space = a->ndim == 0 ? H5Screate(H5S_SCALAR) : H5Screate_simple(a->ndim, dims, NULL);
    hid_t ft = file_type(a->dtype);
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    hid_t dapl = H5Pcreate(H5P_DATASET_ACCESS);
    hw->mtypes[i] = mem_type(a->dtype);
    if (space < 0 || ft < 0 || lcpl < 0 || dcpl < 0 || dapl < 0 || hw->mtypes[i] < 0 ||
        H5Pset_create_intermediate_group(lcpl, 1) < 0 ||
        H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER) < 0 || H5Pset_obj_track_times(dcpl, 0) < 0) {
        st = h5_w_fail(w, err, "cannot set up a dataset");
        goto out;
    }
    uint64_t nelem = w->nelem[i];
    if (w->opts.compress && a->ndim > 0 && nelem > 0) {
        hsize_t chunk[POSENC_MAX_DIMS];
        chunk_dims(a->ndim, dims, posenc_dtype_size(a->dtype), chunk);
        if (H5Zfilter_avail(H5Z_FILTER_DEFLATE) <= 0) {
            st = posenc_seterr(err, POSENC_EUNSUPPORTED,
                               "'%s': this HDF5 library has no gzip filter", w->path);
            goto out;
        }
        if (H5Pset_chunk(dcpl, a->ndim, chunk) < 0 || H5Pset_shuffle(dcpl) < 0 ||
            H5Pset_deflate(dcpl, 4) < 0 ||
            H5Pset_chunk_cache(dapl, 1031, H5_CACHE_BYTES, 1.0) < 0) {
            st = h5_w_fail(w, err, "cannot set up compression");
            goto out;
        }
    }
    if (make_groups(hw->file, name) < 0) {
        char what[POSENC_NAME_MAX + 32];
        snprintf(what, sizeof what, "cannot create the groups of '%s'", name);
        st = h5_w_fail(w, err, what);
        goto out;
    }
    hw->dsets[i] = H5Dcreate2(hw->file, name, ft, space, lcpl, dcpl, dapl);
    if (hw->dsets[i] < 0) {
        char what[POSENC_NAME_MAX + 32];
        snprintf(what, sizeof what, "cannot create dataset '%s'", name);
        st = h5_w_fail(w, err, what);
    }
out:
    if (space >= 0)
        H5Sclose(space);
    if (ft >= 0)
        H5Tclose(ft);
    if (lcpl >= 0)
        H5Pclose(lcpl);
    if (dcpl >= 0)
        H5Pclose(dcpl);
    if (dapl >= 0)
        H5Pclose(dapl);
    return st;
}

/* Whether a string's plain text would itself read back as another JSON value ("123", "true",
 * "null", "[1]"): such a string is stored as its JSON text ("\"123\""), because the reader takes a
 * scalar string attribute that parses as JSON for that value (files of earlier versions hold
 * every value as JSON text); every other string is stored as plain text. */
static int string_needs_quotes(const char *s)
{
    const char *end = NULL;
    cJSON *v = cJSON_ParseWithOpts(s, &end, 1);
    cJSON_Delete(v);
    return v != NULL;
}

/* JSON number text that is an integer (no fraction or exponent) within int64. */
static int json_int(const cJSON *v, const char *text)
{
    return cJSON_IsNumber(v) && !strpbrk(text, ".eE") && fabs(v->valuedouble) < 9.0e15;
}

/* One attribute of n elements (0: scalar; (hsize_t)-1: an empty H5S_NULL dataspace, what h5py
 * writes for h5py.Empty and reads back as it) of type t from buf. */
static posenc_status put_attr(posenc_writer *w, hid_t file, const char *key, hid_t t,
                              hsize_t n, const void *buf, posenc_error *err)
{
    posenc_status st = POSENC_OK;
    int null = n == (hsize_t)-1;
    hid_t sp = null ? H5Screate(H5S_NULL) : n ? H5Screate_simple(1, &n, NULL)
                                              : H5Screate(H5S_SCALAR), a = -1;
    if (sp < 0 || (a = H5Acreate2(file, key, t, sp, H5P_DEFAULT, H5P_DEFAULT)) < 0 ||
        (!null && H5Awrite(a, t, buf) < 0)) {
        char what[POSENC_NAME_MAX + 32];
        snprintf(what, sizeof what, "cannot write attribute '%.200s'", key);
        st = h5_w_fail(w, err, what);
    }
    if (a >= 0)
        H5Aclose(a);
    if (sp >= 0)
        H5Sclose(sp);
    return st;
}

/* The kinds of a JSON array's elements: 1 all numbers, 2 all strings, 3 all bools, 0 other. */
static int array_kind(const cJSON *v, int *all_int)
{
    int kind = -1;
    *all_int = 1;
    for (const cJSON *e = v->child; e; e = e->next) {
        int k = cJSON_IsNumber(e) ? 1 : cJSON_IsString(e) ? 2 : cJSON_IsBool(e) ? 3 : 0;
        if (k == 0 || (kind >= 0 && k != kind))
            return 0;
        kind = k;
        if (k == 1 && (e->valuedouble != (double)(int64_t)e->valuedouble ||
                       fabs(e->valuedouble) >= 9.0e15))
            *all_int = 0;
    }
    return kind < 0 ? 0 : kind; /* [] is stored as its JSON text */
}

/* Metadata key = JSON value text as a typed root attribute, as h5py would store the Python
 * value: a number as an int64 or double scalar, a string as a UTF-8 string, a bool as h5py's
 * enum {FALSE, TRUE} over int8, an array of numbers, strings or bools as a 1-D attribute of
 * that type. Anything else (null, objects, mixed or empty arrays) is stored as its JSON text,
 * which the reader parses back. */
static posenc_status write_attr(posenc_writer *w, hid_t file, const char *key, const char *val,
                                posenc_error *err)
{
    posenc_status st = POSENC_OK;
    cJSON *v = cJSON_Parse(val); /* checked by posenc_writer_meta */
    hid_t str = H5Tcopy(H5T_C_S1), boolt = H5Tenum_create(H5T_NATIVE_INT8);
    int8_t f = 0, t = 1;
    void *buf = NULL;
    if (!v || str < 0 || boolt < 0 || H5Tset_size(str, H5T_VARIABLE) < 0 ||
        H5Tset_cset(str, H5T_CSET_UTF8) < 0 || H5Tenum_insert(boolt, "FALSE", &f) < 0 ||
        H5Tenum_insert(boolt, "TRUE", &t) < 0) {
        st = v ? h5_w_fail(w, err, "cannot make attribute types")
               : posenc_seterr(err, POSENC_ENOMEM, "out of memory");
        goto out;
    }
    int all_int = 0, kind = cJSON_IsArray(v) ? array_kind(v, &all_int) : 0;
    hsize_t n = cJSON_IsArray(v) ? (hsize_t)cJSON_GetArraySize(v) : 0;
    if (cJSON_IsNumber(v)) {
        if (json_int(v, val)) {
            int64_t x = (int64_t)v->valuedouble;
            st = put_attr(w, file, key, H5T_NATIVE_INT64, 0, &x, err);
        } else {
            st = put_attr(w, file, key, H5T_NATIVE_DOUBLE, 0, &v->valuedouble, err);
        }
    } else if (cJSON_IsString(v)) {
        const char *s = string_needs_quotes(v->valuestring) ? val : v->valuestring;
        st = put_attr(w, file, key, str, 0, &s, err);
    } else if (cJSON_IsBool(v)) {
        int8_t b = cJSON_IsTrue(v);
        st = put_attr(w, file, key, boolt, 0, &b, err);
    } else if (kind == 1 || kind == 3) {
        size_t es = kind == 3 ? 1 : 8;
        if (!(buf = malloc((size_t)n * es))) {
            st = posenc_seterr(err, POSENC_ENOMEM, "out of memory");
            goto out;
        }
        size_t k = 0;
        for (const cJSON *e = v->child; e; e = e->next, k++) {
            if (kind == 3)
                ((int8_t *)buf)[k] = (int8_t)cJSON_IsTrue(e);
            else if (all_int)
                ((int64_t *)buf)[k] = (int64_t)e->valuedouble;
            else
                ((double *)buf)[k] = e->valuedouble;
        }
        st = put_attr(w, file, key, kind == 3 ? boolt : all_int ? H5T_NATIVE_INT64
                                                                 : H5T_NATIVE_DOUBLE, n, buf, err);
    } else if (kind == 2) {
        const char **p = malloc((size_t)n * sizeof *p);
        if (!(buf = p)) {
            st = posenc_seterr(err, POSENC_ENOMEM, "out of memory");
            goto out;
        }
        size_t k = 0;
        for (const cJSON *e = v->child; e; e = e->next, k++)
            p[k] = e->valuestring;
        st = put_attr(w, file, key, str, n, p, err);
    } else if (cJSON_IsNull(v)) {
        st = put_attr(w, file, key, str, (hsize_t)-1, NULL, err); /* H5S_NULL: no value */
    } else {
        st = put_attr(w, file, key, str, 0, &val, err);
    }
out:
    free(buf);
    cJSON_Delete(v);
    if (str >= 0)
        H5Tclose(str);
    if (boolt >= 0)
        H5Tclose(boolt);
    return st ? st : h5_w_check(w, err);
}

static const char *file_kind(mode_t m)
{
    if (S_ISFIFO(m))
        return "a pipe";
    if (S_ISCHR(m))
        return "a character device";
    if (S_ISBLK(m))
        return "a block device";
    if (S_ISSOCK(m))
        return "a socket";
    if (S_ISDIR(m))
        return "a directory";
    return "not a regular file";
}

/* Where the file goes. libhdf5 seeks back and forth in a file it opens by name, so a pipe or a
 * device (/dev/full; /dev/stdout on a terminal or a pipe) cannot take one: refuse it before
 * anything is written. A symlink to a regular file (/dev/stdout redirected to a file) is
 * written through: the temporary goes beside the file it names, and the link stays. */
static posenc_status h5_target(const char *path, char **target, posenc_error *err)
{
    struct stat sb, lsb;
    *target = NULL;
    if (strcmp(path, "-") == 0)
        return posenc_seterr(err, POSENC_EINVAL,
                             "'-': HDF5 output needs a seekable regular file, not standard "
                             "output");
    if (stat(path, &sb) == 0) {
        if (!S_ISREG(sb.st_mode))
            return posenc_seterr(err, POSENC_EINVAL,
                                 "'%s': HDF5 output needs a seekable regular file, not %s", path,
                                 file_kind(sb.st_mode));
        if (lstat(path, &lsb) == 0 && S_ISLNK(lsb.st_mode))
            *target = realpath(path, NULL);
    }
    if (!*target)
        *target = strdup(path);
    return *target ? POSENC_OK : posenc_seterr(err, POSENC_ENOMEM, "out of memory");
}

/* Create the file in the temporary through posenc's driver. */
static posenc_status h5_create(posenc_writer *w, h5_writer *hw, posenc_error *err)
{
    posenc_status st = POSENC_OK;
    hid_t fcpl = H5Pcreate(H5P_FILE_CREATE), fapl = H5Pcreate(H5P_FILE_ACCESS);
    hid_t drv = h5drv_id();
    h5drv_fapl fa = { &hw->io };
    /* track creation order of links and attributes, so readers list arrays and metadata in
     * the order they were declared */
    if (fcpl < 0 || fapl < 0 || drv < 0 ||
        H5Pset_link_creation_order(fcpl, H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED) < 0 ||
        H5Pset_attr_creation_order(fcpl, H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED) < 0 ||
        H5Pset_obj_track_times(fcpl, 0) < 0 || /* the root group: no timestamps either */
        H5Pset_driver(fapl, drv, &fa) < 0) {
        st = h5_w_fail(w, err, "cannot set up HDF5 file");
        goto out;
    }
    hw->file = H5Fcreate(hw->tmp, H5F_ACC_TRUNC, fcpl, fapl);
    if (hw->file < 0)
        st = h5_w_fail(w, err, "cannot create HDF5 file");
    else
        st = h5_w_check(w, err);
out:
    if (fcpl >= 0)
        H5Pclose(fcpl);
    if (fapl >= 0)
        H5Pclose(fapl);
    return st;
}

static posenc_status h5_w_start(posenc_writer *w, posenc_error *err)
{
    h5_quiet();
    posenc_status st;
    char *target;
    if ((st = h5_target(w->path, &target, err)) != POSENC_OK)
        return st;
    h5_writer *hw = calloc(1, sizeof *hw);
    if (!hw) {
        free(target);
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    }
    hw->target = target;
    hw->file = -1;
    w->impl = hw;
    size_t n = w->n ? w->n : 1;
    hw->dsets = malloc(n * sizeof *hw->dsets);
    hw->mtypes = malloc(n * sizeof *hw->mtypes);
    hw->spans = malloc(n * sizeof *hw->spans);
    if (!hw->dsets || !hw->mtypes || !hw->spans) {
        st = posenc_seterr(err, POSENC_ENOMEM, "out of memory");
        goto fail;
    }
    for (size_t i = 0; i < w->n; i++)
        hw->dsets[i] = hw->mtypes[i] = -1;
    FILE *fp = NULL;
    if ((st = pe_tmp_create(hw->target, &hw->tmp, &fp, err)) != POSENC_OK)
        goto fail;
    fclose(fp);
    if (!hw->tmp) { /* the target turned into a device or FIFO since h5_target looked */
        st = posenc_seterr(err, POSENC_EINVAL, "'%s': HDF5 output needs a seekable regular file",
                           w->path);
        goto fail;
    }
    if ((st = h5_create(w, hw, err)) != POSENC_OK)
        goto fail;
    for (size_t i = 0; i < w->nmeta; i++)
        if ((st = write_attr(w, hw->file, w->meta_keys[i], w->meta_vals[i], err)) != POSENC_OK)
            goto fail;
    for (size_t i = 0; i < w->n; i++)
        if ((st = create_dataset(w, hw, i, err)) != POSENC_OK)
            goto fail;
    return POSENC_OK;
fail:
    h5_writer_free(w, 1);
    return st;
}

static posenc_status h5_w_write(posenc_writer *w, const void *data, uint64_t nelem,
                                posenc_error *err)
{
    h5_writer *hw = w->impl;
    const unsigned char *p = data;
    h5_quiet();
    while (nelem > 0) {
        while (hw->cur < w->n && hw->done >= w->nelem[hw->cur]) {
            hw->cur++;
            hw->done = 0;
        }
        if (hw->cur >= w->n)
            return posenc_seterr(err, POSENC_EINVAL, "'%s': more data than declared", w->path);
        size_t i = hw->cur;
        uint64_t take = w->nelem[i] - hw->done;
        if (take > nelem)
            take = nelem;
        if (xfer(hw->dsets[i], hw->mtypes[i], &hw->spans[i], hw->done, take, (void *)p, 1) < 0) {
            char what[POSENC_NAME_MAX + 32];
            snprintf(what, sizeof what, "cannot write dataset '%s'", w->arrays[i].name);
            return h5_w_fail(w, err, what);
        }
        posenc_status st = h5_w_check(w, err);
        if (st)
            return st;
        p += take * posenc_dtype_size(w->arrays[i].dtype);
        nelem -= take;
        hw->done += take;
    }
    return POSENC_OK;
}

static posenc_status h5_w_commit(posenc_writer *w, posenc_error *err)
{
    posenc_status st;
    if (!w->impl && (st = h5_w_start(w, err)) != POSENC_OK)
        return st;
    h5_writer *hw = w->impl;
    herr_t rc = 0;
    h5_quiet();
    for (size_t i = 0; i < w->n; i++) {
        if (hw->dsets[i] >= 0 && H5Dclose(hw->dsets[i]) < 0)
            rc = -1;
        hw->dsets[i] = -1;
    }
    if (rc >= 0) {
        rc = H5Fclose(hw->file); /* the id is gone even when this fails: never close it twice */
        hw->file = -1;
    }
    if (rc < 0 || hw->io.err) {
        st = h5_w_fail(w, err, "cannot finish HDF5 file");
        h5_writer_free(w, 1);
        return st;
    }
    st = pe_tmp_commit(NULL, hw->tmp, hw->target, err);
    h5_writer_free(w, st != POSENC_OK);
    return st;
}

static void h5_w_abort(posenc_writer *w) { h5_writer_free(w, 1); }

const pe_backend pe_backend_hdf5 = {
    .format = POSENC_FMT_HDF5,
    .open = h5_open,
    .reader_open = h5_reader_open,
    .read = h5_read,
    .reader_close = h5_reader_close,
    .close = h5_close,
    .w_start = h5_w_start,
    .w_write = h5_w_write,
    .w_commit = h5_w_commit,
    .w_abort = h5_w_abort,
};

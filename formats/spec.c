/* spec.c: format names, guessing a format from a path, and FILE:MEMBER specs. */
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "posenc/io.h"

static const struct {
    const char *name;
    posenc_format fmt;
} names[] = {
    { "npy", POSENC_FMT_NPY },         { "npz", POSENC_FMT_NPZ },
    { "dir", POSENC_FMT_DIR },         { "hdf5", POSENC_FMT_HDF5 },
    { "h5", POSENC_FMT_HDF5 },         { "safetensors", POSENC_FMT_SAFETENSORS },
    { "header", POSENC_FMT_CHEADER },  { "h", POSENC_FMT_CHEADER },
    { "raw", POSENC_FMT_RAW },         { "bin", POSENC_FMT_RAW },
    { "gguf", POSENC_FMT_GGUF },
};

posenc_status posenc_format_parse(const char *s, posenc_format *out, posenc_error *err)
{
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(s, names[i].name) == 0) {
            *out = names[i].fmt;
            return POSENC_OK;
        }
    return posenc_seterr(err, POSENC_EINVAL,
                         "unknown format '%s' (expected npy, npz, dir, hdf5, safetensors, header, "
                         "raw or gguf)", s);
}

const char *posenc_format_name(posenc_format f)
{
    switch (f) {
    case POSENC_FMT_NPY: return "npy";
    case POSENC_FMT_NPZ: return "npz";
    case POSENC_FMT_DIR: return "dir";
    case POSENC_FMT_HDF5: return "hdf5";
    case POSENC_FMT_SAFETENSORS: return "safetensors";
    case POSENC_FMT_CHEADER: return "header";
    case POSENC_FMT_RAW: return "raw";
    case POSENC_FMT_GGUF: return "gguf";
    case POSENC_FMT_AUTO: break;
    }
    return "auto";
}

static const struct {
    const char *ext;
    posenc_format fmt;
} exts[] = {
    { ".npy", POSENC_FMT_NPY },   { ".npz", POSENC_FMT_NPZ },
    { ".h5", POSENC_FMT_HDF5 },   { ".hdf5", POSENC_FMT_HDF5 },
    { ".hdf", POSENC_FMT_HDF5 },  { ".safetensors", POSENC_FMT_SAFETENSORS },
    { ".h", POSENC_FMT_CHEADER }, { ".bin", POSENC_FMT_RAW },
    { ".gguf", POSENC_FMT_GGUF },
};

static posenc_format by_ext(const char *path, size_t len)
{
    for (size_t i = 0; i < sizeof exts / sizeof exts[0]; i++) {
        size_t el = strlen(exts[i].ext);
        if (len > el && strncasecmp(path + len - el, exts[i].ext, el) == 0)
            return exts[i].fmt;
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
    return by_ext(path, len);
}

posenc_status posenc_spec_split(const char *spec, char *path, size_t path_len, char *member,
                                size_t member_len, posenc_error *err)
{
    size_t len = strlen(spec);
    /* the last ':' that follows a container extension splits path from member */
    for (size_t i = len; i-- > 0;) {
        if (spec[i] != ':')
            continue;
        posenc_format f = by_ext(spec, i);
        if (f == POSENC_FMT_NPZ || f == POSENC_FMT_HDF5 || f == POSENC_FMT_SAFETENSORS ||
            f == POSENC_FMT_RAW || f == POSENC_FMT_GGUF) {
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

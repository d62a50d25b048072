# t_install.sh: make install puts down a library users can link. From the source tree, into a
# build directory of its own (never the caller's build/), it installs with PREFIX=DIR, checks the
# files, the soname links and that libposenc.so exports exactly the functions include/posenc/*.h
# declares (an internal pe_ function is in libposenc.a only); that a program dropping a
# posenc_status fails to compile under -Werror and that the large structs need
# POSENC_STATIC_LINKING_ONLY; compiles a program calling posenc_config_load, posenc_model_rope,
# posenc_rope_params_compute and posenc_rope_table with `pkg-config --cflags --libs posenc` (shared)
# and with `pkg-config --static` (libposenc.a; the binary must not need libposenc.so), and checks
# its cos/sin against closed forms computed here (default RoPE, theta 10000, head_dim 8; Llama 3.1's
# llama3 rule); then make uninstall leaves no file. The same with DESTDIR=DIR PREFIX=/usr/local:
# the same files under DIR, a posenc.pc that says /usr/local, a link through pkg-config
# --define-prefix, and an uninstall that leaves nothing.
. "$SRC/tests/cli/lib.sh"

top=$(pwd)
cc=${CC:-cc}
# A make of our own: MAKEFLAGS of a calling make would name a jobserver this shell does not have.
# CFLAGS=-O0: what is installed is tested here, not its speed, and the build is half the test's time.
mk() {
    env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -j2 -C "$SRC" B="$top/build" S="$top/build-san" \
        CFLAGS=-O0 "$@" \
        >> make.log 2>&1 || { echo "make $* failed"; tail -n 30 make.log; return 1; }
}
# Every file and symlink under a tree, as "TYPE PATH" relative to it (links with their target).
tree() {
    (cd "$1" && find . ! -type d | sort | while read -r f; do
        if [ -L "$f" ]; then echo "link $f -> $(readlink "$f")"; else echo "file $f"; fi
    done)
}

mk install PREFIX="$top/p"
lib=$top/p/lib
for f in bin/posenc lib/libposenc.a lib/libposenc.so.0.1.0 lib/pkgconfig/posenc.pc \
         include/posenc/posenc.h share/man/man1/posenc.1 share/man/man3/posenc.3 share/man/man5/posenc-formats.5; do
    [ -f "p/$f" ] && [ ! -L "p/$f" ] || { echo "not installed: $f"; exit 1; }
done
[ "$(readlink "$lib/libposenc.so.0")" = libposenc.so.0.1.0 ] || { ls -l "$lib"; exit 1; }
[ "$(readlink "$lib/libposenc.so")" = libposenc.so.0 ] || { ls -l "$lib"; exit 1; }
readelf -d "$lib/libposenc.so.0.1.0" | grep -q 'SONAME.*\[libposenc\.so\.0\]' ||
    { echo "soname is not libposenc.so.0"; readelf -d "$lib/libposenc.so.0.1.0"; exit 1; }
"$top/p/bin/posenc" --version | grep -qx 'posenc 0\.1\.0'
grep -qxF "prefix=$top/p" "$lib/pkgconfig/posenc.pc" || { cat "$lib/pkgconfig/posenc.pc"; exit 1; }
tree p > installed.txt

# The exported symbols are the header's functions, no more (no posenc_npy_*, posenc_mathx_*,
# pe_*) and no fewer.
nm -D --defined-only "$lib/libposenc.so.0.1.0" | awk '{ print $3 }' | sort > exported.txt
"$PY" - "$SRC"/include/posenc/*.h > declared.txt <<'PYEOF'
import re, sys
names = set()
for path in sys.argv[1:]:
    text = open(path).read()
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    text = re.sub(r"^\s*#[^\n]*", " ", text, flags=re.M)
    names.update(re.findall(r"\b(posenc_\w+)\s*\(", text))
print("\n".join(sorted(names)))
PYEOF
[ "$(wc -l < declared.txt)" -gt 100 ] || { echo "too few declarations"; cat declared.txt; exit 1; }
if ! diff declared.txt exported.txt > sym.diff; then
    echo "libposenc.so exports (>) and headers declare (<) different functions:"; cat sym.diff; exit 1
fi

export PKG_CONFIG_PATH="$lib/pkgconfig"
# Visibility decides the exports (include/posenc/export.h: POSENC_API, the .so built with
# -fvisibility=hidden): pe_raw_paths, an internal function the program takes from libposenc.a,
# is in the archive and absent from the .so, so a program calling it links statically only.
cat > internal.c <<'EOF'
#include <stdlib.h>
#include <posenc/posenc.h>
posenc_status pe_raw_paths(const char *path, char **bin, char **json, posenc_error *err);
int main(void)
{
    char *bin = NULL, *json = NULL;
    posenc_status st = pe_raw_paths("a.bin", &bin, &json, NULL);
    free(bin);
    free(json);
    return st != POSENC_OK;
}
EOF
nm "$lib/libposenc.a" | grep -q ' T pe_raw_paths$' || { echo "libposenc.a has no pe_raw_paths"; exit 1; }
if nm -D "$lib/libposenc.so.0.1.0" | grep -q 'pe_raw_paths'; then
    echo "libposenc.so exports pe_raw_paths"; exit 1
fi
# shellcheck disable=SC2046 # pkg-config's output is a list of words
if "$cc" -std=c11 -o internal_shared internal.c $(pkg-config --cflags --libs posenc) 2> internal.err
then
    echo "a program calling pe_raw_paths links against libposenc.so"; exit 1
fi
grep -q "undefined reference to .pe_raw_paths" internal.err || { cat internal.err; exit 1; }
# shellcheck disable=SC2046
"$cc" -std=c11 -o internal_static internal.c $(pkg-config --cflags posenc) "$lib/libposenc.a" \
    $(pkg-config --static --libs posenc | sed 's/-lposenc//')
./internal_static

# POSENC_NODISCARD: with -Werror alone (-Wunused-result is on by default), a program that drops
# a posenc_status does not compile; the same program testing it does.
cat > drop.c <<'EOF'
#include <posenc/posenc.h>
int main(void)
{
    posenc_dtype dt = POSENC_DT_F32;
    posenc_dtype_parse("bf16", &dt, NULL);
    return dt == POSENC_DT_BF16 ? 0 : 1;
}
EOF
# shellcheck disable=SC2046
if "$cc" -std=c11 -Werror -c -o drop.o drop.c $(pkg-config --cflags posenc) 2> drop.err; then
    echo "a dropped posenc_status compiles under -Werror"; exit 1
fi
grep -q "posenc_dtype_parse.*warn_unused_result" drop.err || { cat drop.err; exit 1; }
sed 's/^    posenc_dtype_parse(\(.*\));$/    if (posenc_dtype_parse(\1) != POSENC_OK)\n        return 2;/' \
    drop.c > kept.c
grep -q 'if (posenc_dtype_parse' kept.c || { cat kept.c; exit 1; }
# shellcheck disable=SC2046
"$cc" -std=c11 -Wall -Wextra -Werror -o kept kept.c $(pkg-config --cflags --libs posenc)
LD_LIBRARY_PATH=$lib ./kept

# POSENC_STATIC_LINKING_ONLY: the large structs' layout only for a program that asks for it
printf '#include <posenc/posenc.h>\nint main(void) { return sizeof(posenc_rope_params) < 1024; }\n' \
    > layout.c
# shellcheck disable=SC2046
if "$cc" -std=c11 -c -o layout.o layout.c $(pkg-config --cflags posenc) 2> layout.err; then
    echo "posenc_rope_params is complete without POSENC_STATIC_LINKING_ONLY"; exit 1
fi
grep -q "incomplete type" layout.err || { cat layout.err; exit 1; }
# shellcheck disable=SC2046
"$cc" -std=c11 -Wall -Werror -DPOSENC_STATIC_LINKING_ONLY -o layout layout.c \
    $(pkg-config --cflags --libs posenc)
LD_LIBRARY_PATH=$lib ./layout

# A default-RoPE config whose cos/sin have a closed form: inv_freq_i = 10000^(-2i/8).
cat > small.json <<'EOF'
{"model_type": "llama", "hidden_size": 32, "num_attention_heads": 4, "head_dim": 8,
 "num_hidden_layers": 2, "rope_theta": 10000.0, "max_position_embeddings": 128}
EOF
# the program is posenc(3)'s EXAMPLE, taken from the installed page: the worked example a user
# copies is the one tested here
sed -n '/^\.EX$/,/^\.EE$/p' "$top/p/share/man/man3/posenc.3" | sed '1d;$d' | sed 's/\\e/\\/g' > prog.c
grep -q 'posenc_apply_rows' prog.c || { echo "no EXAMPLE in the installed posenc.3"; exit 1; }

# check OUTPUT MODEL: the program's numbers against float64 closed forms (|error| <= 1e-9; the
# angles reach 65536 rad, where float64 holds about 1e-11).
check() {
    "$PY" - "$1" "$2" <<'PYEOF'
import math, sys
import numpy as np
lines = open(sys.argv[1]).read().split("\n")
version, rtype, head_dim, width, scaling = lines[0].split()
if sys.argv[2] == "small":
    theta, d, want_type = 10000.0, 8, "default"
    inv = theta ** (-np.arange(0, d, 2, dtype=np.float64) / d)
else:
    # transformers _compute_llama3_parameters (modeling_rope_utils.py) in float64
    theta, d, want_type = 500000.0, 128, "llama3"
    factor, low, high, old = 8.0, 1.0, 4.0, 8192.0
    inv = theta ** (-np.arange(0, d, 2, dtype=np.float64) / d)
    wavelen = 2 * math.pi / inv
    llama = np.where(wavelen > old / low, inv / factor, inv)
    smooth = (old / wavelen - low) / (high - low)
    smoothed = (1 - smooth) * llama / factor + smooth * llama
    medium = ~(wavelen < old / high) & ~(wavelen > old / low)
    inv = np.where(medium, smoothed, llama)
assert (version, rtype, int(head_dim), int(width), float(scaling)) == \
    ("0.1.0", want_type, d, d // 2, 1.0), lines[0]
rows = [l.split() for l in lines[1:] if l and not l.startswith("rot ")]
assert len(rows) == 5 * (d // 2), len(rows)
# the rotated vectors: x_j = j + 1 at each position, neox pairs (i, i + d/2), float32 arithmetic
rot = [l.split()[1:] for l in lines[1:] if l.startswith("rot ")]
assert len(rot) == 5 * d, len(rot)
for p_, j, y in rot:
    j = int(j)
    i = j % (d // 2)
    a = int(p_) * inv[i]
    x1, x2 = i + 1.0, i + 1.0 + d // 2
    want = x1 * math.cos(a) - x2 * math.sin(a) if j < d // 2 else x2 * math.cos(a) + x1 * math.sin(a)
    assert abs(float(y) - want) <= 1e-5 * (abs(x1) + abs(x2)), (p_, j, y, want)
worst = 0.0
for pos, i, c, s in rows:
    a = int(pos) * inv[int(i)]
    worst = max(worst, abs(float(c) - math.cos(a)), abs(float(s) - math.sin(a)))
assert worst <= 1e-9, worst
PYEOF
}

# Shared: plain --libs is enough; the program needs libposenc.so.0 (the soname), found through
# LD_LIBRARY_PATH. The program does not define POSENC_STATIC_LINKING_ONLY.
# shellcheck disable=SC2046 # pkg-config's output is a list of words
"$cc" -std=c11 -Wall -Wextra -Werror -o t_shared prog.c $(pkg-config --cflags --libs posenc)
readelf -d t_shared | grep -q 'NEEDED.*\[libposenc\.so\.0\]' ||
    { echo "t_shared does not need libposenc.so.0"; readelf -d t_shared; exit 1; }
LD_LIBRARY_PATH=$lib ldd t_shared | grep -q "libposenc\.so\.0 => $lib/libposenc\.so\.0" ||
    { LD_LIBRARY_PATH=$lib ldd t_shared; exit 1; }
LD_LIBRARY_PATH=$lib ./t_shared small.json > shared_small.txt
LD_LIBRARY_PATH=$lib ./t_shared "$DATA/configs/llama-3.1-8b.json" > shared_llama.txt
check shared_small.txt small
check shared_llama.txt llama

# C++: every public header is extern "C", so a C++ program links against the C library
cat > prog.cc <<'CXX'
#include <posenc/posenc.h>
#include <cstdio>
int main()
{
    std::printf("%s %s %s\n", posenc_version(), posenc_dtype_name(POSENC_DT_BF16),
                posenc_precision_name(POSENC_PREC_GGML));
    return 0;
}
CXX
cxx=${CXX:-g++}
# shellcheck disable=SC2046 # pkg-config's output is a list of words
"$cxx" -std=c++17 -Wall -Wextra -Werror -o t_cxx prog.cc $(pkg-config --cflags --libs posenc)
[ "$(LD_LIBRARY_PATH=$lib ./t_cxx)" = "0.1.0 bf16 ggml" ]

# Static: --static adds -lm -lpthread and libcjson, zlib, hdf5. With libposenc.so beside
# libposenc.a the linker takes the .so for -lposenc, so name the archive (-l:libposenc.a), as a
# user linking it would (or -static, which needs a libcjson.a Debian does not ship).
set --
for word in $(pkg-config --static --cflags --libs posenc); do
    [ "$word" = -lposenc ] && word=-l:libposenc.a
    set -- "$@" "$word"
done
case " $* " in *" -l:libposenc.a "*) ;; *) echo "no -lposenc in: $*"; exit 1 ;; esac
for want in -lm -lpthread -lcjson -lz -lhdf5; do
    case " $* " in *" $want "*) ;; *) echo "pkg-config --static lacks $want: $*"; exit 1 ;; esac
done
"$cc" -std=c11 -Wall -Wextra -Werror -o t_static prog.c "$@"
if ldd t_static | grep libposenc; then echo "t_static needs libposenc.so"; exit 1; fi
if readelf -d t_static | grep -q 'NEEDED.*libposenc'; then echo "t_static needs libposenc"; exit 1; fi
./t_static small.json > static_small.txt
./t_static "$DATA/configs/llama-3.1-8b.json" > static_llama.txt
cmp shared_small.txt static_small.txt
cmp shared_llama.txt static_llama.txt

mk uninstall PREFIX="$top/p"
left=$(tree p)
[ -z "$left" ] || { echo "left after uninstall:"; echo "$left"; exit 1; }
[ ! -e p/include/posenc ]

# DESTDIR: the same files under stage/usr/local; posenc.pc names /usr/local (the make of another
# PREFIX above must not leave its posenc.pc behind); pkg-config --define-prefix relocates it.
mk install DESTDIR="$top/stage" PREFIX=/usr/local
tree stage/usr/local > staged.txt
cmp installed.txt staged.txt || { diff installed.txt staged.txt; exit 1; }
[ "$(find stage ! -type d | wc -l)" -eq "$(wc -l < installed.txt)" ] ||
    { echo "files outside stage/usr/local"; find stage ! -type d; exit 1; }
for want in 'prefix=/usr/local' 'libdir=${prefix}/lib' 'includedir=${prefix}/include'; do
    grep -qxF "$want" stage/usr/local/lib/pkgconfig/posenc.pc ||
        { echo "posenc.pc lacks $want"; cat stage/usr/local/lib/pkgconfig/posenc.pc; exit 1; }
done
slib=$top/stage/usr/local/lib
# shellcheck disable=SC2046
"$cc" -std=c11 -o t_staged prog.c \
    $(PKG_CONFIG_PATH=$slib/pkgconfig pkg-config --define-prefix --cflags --libs posenc)
LD_LIBRARY_PATH=$slib ./t_staged small.json > staged_small.txt
cmp shared_small.txt staged_small.txt
mk uninstall DESTDIR="$top/stage" PREFIX=/usr/local
left=$(tree stage)
[ -z "$left" ] || { echo "left after uninstall:"; echo "$left"; exit 1; }

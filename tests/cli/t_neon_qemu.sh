# The aarch64 NEON path (lib/core/kern_neon.c) gives the portable kernels' bits (issue 23): the
# kernels, cross-compiled for aarch64 with the driver tests/cli/neon_kernels.c (no library of
# the target is needed), run under qemu-user. Skipped (77) when the cross compiler or qemu is
# missing; `.ci/deps.sh test` installs them, so CI always runs it.
. "$SRC/tests/cli/lib.sh"

XCC=aarch64-linux-gnu-gcc
if ! command -v "$XCC" > /dev/null 2>&1 || ! command -v qemu-aarch64 > /dev/null 2>&1; then
    echo "no $XCC or qemu-aarch64 (packages gcc-aarch64-linux-gnu, libc6-dev-arm64-cross, qemu-user)"
    exit 77
fi

# the build's own flags for these files (Makefile: -ffp-contract=off for the kernels), static so
# that qemu needs no aarch64 sysroot
"$XCC" -std=c11 -D_GNU_SOURCE -O2 -ffp-contract=off -Wall -Wextra -Wpedantic -Wshadow \
    -Wstrict-prototypes -Wmissing-prototypes -Werror -static -I"$SRC/include" -I"$SRC" \
    -o neon_kernels "$SRC/tests/cli/neon_kernels.c" "$SRC/lib/core/kern.c" \
    "$SRC/lib/core/kern_neon.c" "$SRC/lib/core/cpu.c" "$SRC/lib/core/error.c" -lpthread
# no fused multiply-add anywhere in the kernels: each product rounded on its own
if aarch64-linux-gnu-objdump -d neon_kernels | grep -Eq '[[:space:]](fmla|fmls|fmadd|fmsub|fnmadd|fnmsub)[[:space:]]'; then
    echo "the aarch64 kernels contain a fused multiply-add"
    exit 1
fi
qemu-aarch64 ./neon_kernels > out.txt || { cat out.txt; exit 1; }
cat out.txt
grep -Eq '^neon: [0-9]{7,} values compared, 0 differ$' out.txt

# POSENC_CPU=neon on this (x86-64) build: not runnable here, refused with the one warning
case $(uname -m) in
x86_64)
    POSENC_CPU=neon "$POSENC" --version > out.stdout 2> out.stderr
    grep -q "^posenc version: POSENC_CPU=neon: this CPU or build cannot run it; using " out.stderr
    ! grep -q ' neon' out.stdout
    ;;
esac

/* cmd/util_progress.c: one progress line on standard error while a long run streams data.
 *
 * The counters are atomics so that the io layer's observer (formats/io/iowatch.h) can be called from
 * apply's and gen's streaming threads; one thread at a time draws (an atomic flag), and only
 * when the redraw interval has passed, so a run pays one clock read per streamed chunk. */
#include <inttypes.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "formats/io/iowatch.h"
#include "cmd/util_progress.h"

#define NS 1000000000LL

static struct {
    const char *cmd, *unit;
    int quiet, started, finished;
    long long t0, delay, interval;
    atomic_ullong total, done;
    atomic_llong next;         /* monotonic ns of the next redraw */
    atomic_flag drawing;
} P = { .drawing = ATOMIC_FLAG_INIT };
static volatile sig_atomic_t drawn; /* a line is on screen */
static volatile sig_atomic_t dying; /* a signal is ending the run: no more lines */

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * NS + ts.tv_nsec;
}

/* Seconds from an environment knob (checked by cmd_env_check), else def. */
static long long knob_ns(const char *name, double def)
{
    const char *e = getenv(name);
    double v = def;
    if (e && *e) {
        char *end;
        double x = strtod(e, &end);
        if (end != e && *end == '\0' && x >= 0 && x <= 3600)
            v = x;
    }
    return (long long)(v * (double)NS);
}

void cmd_progress_quiet(void) { P.quiet = 1; }

void cmd_progress_start(const char *cmd, uint64_t total, const char *unit)
{
    P.cmd = cmd;
    P.unit = unit;
    P.started = !P.quiet && isatty(STDERR_FILENO);
    P.finished = 0;
    P.t0 = now_ns();
    P.delay = knob_ns("POSENC_PROGRESS_DELAY", 1.0);
    P.interval = knob_ns("POSENC_PROGRESS_INTERVAL", 0.2);
    atomic_store(&P.total, total);
    atomic_store(&P.done, 0);
    atomic_store(&P.next, P.t0 + P.delay);
}

void cmd_progress_total(uint64_t add)
{
    if (P.started)
        atomic_fetch_add(&P.total, add);
}

/* "12.0 MiB" for bytes, "1200 rows" otherwise. */
static void amount(char *buf, size_t cap, double v, int with_unit)
{
    static const char *const pre[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
    if (strcmp(P.unit, "B") != 0) {
        snprintf(buf, cap, "%.0f%s%s", v, with_unit ? " " : "", with_unit ? P.unit : "");
        return;
    }
    int k = 0;
    while (v >= 1024 && k < 5) {
        v /= 1024;
        k++;
    }
    if (k == 0)
        snprintf(buf, cap, "%.0f B", v);
    else
        snprintf(buf, cap, "%.1f %s", v, pre[k]);
}

static void duration(char *buf, size_t cap, double s)
{
    long long t = (long long)(s + 0.5);
    if (t >= 3600)
        snprintf(buf, cap, "%lld:%02lld:%02lld", t / 3600, t / 60 % 60, t % 60);
    else
        snprintf(buf, cap, "%lld:%02lld", t / 60, t % 60);
}

static void draw(long long t, int final)
{
    uint64_t done = atomic_load(&P.done), total = atomic_load(&P.total);
    double secs = (double)(t - P.t0) / (double)NS, rate = secs > 0 ? (double)done / secs : 0;
    char d[32], tot[32], r[32], eta[32], line[256];
    amount(d, sizeof d, (double)done, 1);
    amount(r, sizeof r, rate, 0);
    if (final) {
        snprintf(line, sizeof line, "posenc %s: %s in %.1f s (%s/s)", P.cmd, d, secs, r);
    } else {
        amount(tot, sizeof tot, (double)total, 1);
        if (total > 0 && done <= total && rate > 0)
            duration(eta, sizeof eta, (double)(total - done) / rate);
        else
            snprintf(eta, sizeof eta, "?");
        snprintf(line, sizeof line, "posenc %s: %s of %s (%d%%), %s/s, ETA %s", P.cmd, d, tot,
                 total ? (int)(100.0 * (double)(done < total ? done : total) / (double)total) : 0,
                 r, eta);
    }
    /* carriage return, the line, erase to its end: one line redrawn in place; the final line
     * clears the progress line first, like any other output. drawn is set before the line is
     * written, so that a signal arriving meanwhile erases it */
    if (final) {
        fprintf(stderr, "\r\033[K%s\n", line);
        fflush(stderr);
        drawn = 0;
    } else {
        drawn = 1;
        fprintf(stderr, "\r%s\033[K", line);
        fflush(stderr);
    }
}

void cmd_progress_update(uint64_t add_done)
{
    if (!P.started)
        return;
    atomic_fetch_add(&P.done, add_done);
    long long t = now_ns();
    if (t < atomic_load(&P.next) || P.quiet || P.finished)
        return;
    if (atomic_flag_test_and_set(&P.drawing))
        return; /* another thread is drawing */
    if (t >= atomic_load(&P.next) && !dying) {
        draw(t, 0);
        atomic_store(&P.next, t + P.interval);
    }
    atomic_flag_clear(&P.drawing);
}

void cmd_progress_clear(void)
{
    if (!drawn)
        return;
    fputs("\r\033[K", stderr);
    fflush(stderr);
    drawn = 0;
}

void cmd_progress_signal(void)
{
    /* a worker thread may be drawing while the signal runs here: no line after this one, and
     * wait (at most 0.2 s: the signal may have interrupted the drawing thread itself) until a
     * line being drawn is out, so that the erase comes last */
    dying = 1;
    for (int i = 0; i < 200 && atomic_flag_test_and_set(&P.drawing); i++) {
        struct timespec ms = { 0, 1000000 };
        nanosleep(&ms, NULL);
    }
    if (drawn) {
        ssize_t rc = write(STDERR_FILENO, "\r\033[K", 4);
        (void)rc;
        drawn = 0;
    }
}

static void on_io(void *ctx, uint64_t add_total, uint64_t add_done)
{
    (void)ctx;
    if (add_total)
        cmd_progress_total(add_total);
    if (add_done)
        cmd_progress_update(add_done);
}

void cmd_progress_watch(const char *cmd, int what)
{
    cmd_progress_start(cmd, 0, "B");
    if (P.started)
        pe_io_watch(what, on_io, NULL);
}

void cmd_progress_finish(void)
{
    if (!P.started || P.finished)
        return;
    P.finished = 1;
    pe_io_watch(0, NULL, NULL);
    if (drawn)
        draw(now_ns(), 1);
}

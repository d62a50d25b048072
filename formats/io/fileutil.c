/* fileutil.c: helpers every backend shares: temporary files beside the target that are renamed
 * into place on commit (registered so that a signal can remove them, and named after the owning
 * process so that a later run can tell a stale one), the writer's metadata as JSON, and exact
 * reads and writes. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "formats/io/backend.h"
#include "formats/io/inputs.h"
#include "formats/io/strbuf.h"

/* ---- the temporaries of this run ----
 * A fixed table, so that a signal handler can walk it: a slot's path is written completely
 * before its flag is set, and the handler only reads flagged slots and calls unlink(2), which is
 * async-signal-safe. */
#define TMP_SLOTS 64
#define TMP_PATH 4096
static char tmp_path_of[TMP_SLOTS][TMP_PATH];
static volatile sig_atomic_t tmp_live[TMP_SLOTS];
static pthread_mutex_t tmp_lock = PTHREAD_MUTEX_INITIALIZER;

static void tmp_register(const char *path)
{
    size_t n = strlen(path);
    if (n >= TMP_PATH)
        return; /* cannot be removed on a signal; commit and discard still remove it */
    pthread_mutex_lock(&tmp_lock);
    for (int i = 0; i < TMP_SLOTS; i++) {
        if (!tmp_live[i]) {
            memcpy(tmp_path_of[i], path, n + 1);
            tmp_live[i] = 1;
            break;
        }
    }
    pthread_mutex_unlock(&tmp_lock);
}

static void tmp_unregister(const char *path)
{
    pthread_mutex_lock(&tmp_lock);
    for (int i = 0; i < TMP_SLOTS; i++) {
        if (tmp_live[i] && strcmp(tmp_path_of[i], path) == 0) {
            tmp_live[i] = 0;
            break;
        }
    }
    pthread_mutex_unlock(&tmp_lock);
}

void posenc_tmp_remove_all(void)
{
    for (int i = 0; i < TMP_SLOTS; i++)
        if (tmp_live[i])
            unlink(tmp_path_of[i]);
}

/* ---- stale temporaries of interrupted runs ----
 * ".posenc-tmp-PID-XXXXXX-NAME": a later run in the same directory removes those whose process is
 * gone, or (any form, the pid-less one of older versions included) that are older than a day. */
#define STALE_AGE (24 * 3600)
static pthread_mutex_t stale_lock = PTHREAD_MUTEX_INITIALIZER;
static size_t stale_removed;
static char stale_dir[TMP_PATH];
static char stale_seen[8][TMP_PATH]; /* directories already swept in this run */
static int n_stale_seen;

static int stale_pid_gone(const char *name)
{
    const char *p = name + sizeof ".posenc-tmp-" - 1;
    char *end;
    long pid = strtol(p, &end, 10);
    if (end == p || *end != '-' || pid <= 0 || pid > INT_MAX)
        return 0;
    if ((pid_t)pid == getpid())
        return 0;
    return kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

static void sweep_stale(const char *dir)
{
    pthread_mutex_lock(&stale_lock);
    for (int i = 0; i < n_stale_seen; i++)
        if (strcmp(stale_seen[i], dir) == 0) {
            pthread_mutex_unlock(&stale_lock);
            return;
        }
    if (n_stale_seen < 8 && strlen(dir) < TMP_PATH)
        snprintf(stale_seen[n_stale_seen++], TMP_PATH, "%s", dir);
    DIR *d = opendir(dir);
    struct dirent *e;
    time_t now = time(NULL);
    while (d && (e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, ".posenc-tmp-", 12) != 0)
            continue;
        char path[TMP_PATH];
        if (snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= (int)sizeof path)
            continue;
        struct stat sb;
        if (lstat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
            continue;
        if (!stale_pid_gone(e->d_name) && now - sb.st_mtime < STALE_AGE)
            continue;
        if (unlink(path) == 0) {
            if (stale_removed++ == 0)
                snprintf(stale_dir, sizeof stale_dir, "%s", dir);
        }
    }
    if (d)
        closedir(d);
    pthread_mutex_unlock(&stale_lock);
}

size_t posenc_tmp_stale_removed(char *dir, size_t cap)
{
    pthread_mutex_lock(&stale_lock);
    size_t n = stale_removed;
    if (dir && cap)
        snprintf(dir, cap, "%s", stale_dir);
    stale_removed = 0;
    pthread_mutex_unlock(&stale_lock);
    return n;
}

/* ---- the run's inputs ---- */
#define MAX_INPUTS 256
static struct input_id {
    dev_t dev;
    ino_t ino;
    char name[256];
} inputs[MAX_INPUTS];
static int n_inputs;
static int inputs_guarded; /* off in the library by default; the posenc program turns it on */
static int outputs_forced; /* --force: replace read-only files and other users' files too */
static pthread_mutex_t input_lock = PTHREAD_MUTEX_INITIALIZER;

void pe_inputs_guard(int on)
{
    pthread_mutex_lock(&input_lock);
    inputs_guarded = on;
    if (!on)
        n_inputs = 0;
    pthread_mutex_unlock(&input_lock);
}

void pe_outputs_force(int on)
{
    pthread_mutex_lock(&input_lock);
    outputs_forced = on;
    pthread_mutex_unlock(&input_lock);
}

/* The file a symlink chain ends at (the path itself when it is no symlink): an output named by
 * a link is written through it, and the link stays. Caller frees; NULL when out of memory. */
static char *link_target(const char *path)
{
    char *cur = strdup(path);
    for (int hops = 0; cur && hops < 40; hops++) {
        struct stat ls;
        char buf[TMP_PATH];
        if (lstat(cur, &ls) != 0 || !S_ISLNK(ls.st_mode))
            break;
        ssize_t n = readlink(cur, buf, sizeof buf - 1);
        if (n <= 0)
            break;
        buf[n] = '\0';
        const char *sl = strrchr(cur, '/');
        size_t dl = buf[0] == '/' || !sl ? 0 : (size_t)(sl - cur) + 1;
        char *next = malloc(dl + (size_t)n + 1);
        if (next) {
            memcpy(next, cur, dl);
            memcpy(next + dl, buf, (size_t)n + 1);
        }
        free(cur);
        cur = next;
    }
    return cur;
}

/* POSENC_EOVERWRITE when path is a regular file that is read-only or another user's: posenc
 * replaces it only with --force (pe_outputs_force), as cp -f would be needed. */
static posenc_status check_replace(const char *path, posenc_error *err)
{
    struct stat sb;
    pthread_mutex_lock(&input_lock);
    int check = inputs_guarded && !outputs_forced;
    pthread_mutex_unlock(&input_lock);
    if (!check || stat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
        return POSENC_OK;
    if (sb.st_uid != geteuid())
        return posenc_seterr(err, POSENC_EOVERWRITE, "'%s': refusing to replace a file owned by "
                             "another user (uid %lu); pass --force", path,
                             (unsigned long)sb.st_uid);
    if (!(sb.st_mode & 0222))
        return posenc_seterr(err, POSENC_EOVERWRITE, "'%s': refusing to replace a read-only "
                             "file; pass --force", path);
    return POSENC_OK;
}

static void input_add_stat(const struct stat *sb, const char *name)
{
    pthread_mutex_lock(&input_lock);
    if (!inputs_guarded) {
        pthread_mutex_unlock(&input_lock);
        return;
    }
    int i;
    for (i = 0; i < n_inputs; i++)
        if (inputs[i].dev == sb->st_dev && inputs[i].ino == sb->st_ino)
            break;
    if (i == n_inputs && n_inputs < MAX_INPUTS) {
        inputs[i].dev = sb->st_dev;
        inputs[i].ino = sb->st_ino;
        snprintf(inputs[i].name, sizeof inputs[i].name, "%s", name);
        n_inputs++;
    }
    pthread_mutex_unlock(&input_lock);
}

void pe_input_add(const char *path)
{
    struct stat sb;
    if (path && strcmp(path, "-") != 0 && stat(path, &sb) == 0 &&
        (S_ISREG(sb.st_mode) || S_ISDIR(sb.st_mode)))
        input_add_stat(&sb, path);
}

void pe_input_add_fd(int fd, const char *name)
{
    struct stat sb;
    if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode))
        input_add_stat(&sb, name ? name : "-");
}

/* The input with sb's device and inode (its name into name), or 0. */
static int input_of_stat(const struct stat *sb, char *name, size_t cap)
{
    int hit = 0;
    pthread_mutex_lock(&input_lock);
    for (int i = 0; i < n_inputs && !hit; i++)
        if (inputs[i].dev == sb->st_dev && inputs[i].ino == sb->st_ino) {
            snprintf(name, cap, "%s", inputs[i].name);
            hit = 1;
        }
    pthread_mutex_unlock(&input_lock);
    return hit;
}

/* The input that path (followed through symlinks) is, or 0. */
static int input_of(const char *path, char *name, size_t cap)
{
    struct stat sb;
    return stat(path, &sb) == 0 && input_of_stat(&sb, name, cap);
}

static posenc_status refuse_input(const char *out, const char *in, posenc_error *err)
{
    if (strcmp(out, in) == 0)
        return posenc_seterr(err, POSENC_EOVERWRITE, "'%s': refusing to overwrite an input",
                             out);
    return posenc_seterr(err, POSENC_EOVERWRITE, "'%s': refusing to overwrite an input ('%s')",
                         out, in);
}

/* The input that the open file fd is (same device and inode), or 0. */
static int input_of_fd(int fd, char *name, size_t cap)
{
    struct stat sb;
    return fstat(fd, &sb) == 0 && input_of_stat(&sb, name, cap);
}

posenc_status pe_output_check_fd(int fd, posenc_error *err)
{
    char in[256];
    /* "-" is standard output: a shell redirection (>> q.npy, 1<> q.npy) can make it an input */
    if (input_of_fd(fd, in, sizeof in))
        return refuse_input("-", in, err);
    return POSENC_OK;
}

posenc_status pe_output_check(const char *path, posenc_error *err)
{
    char in[256];
    if (!path)
        return POSENC_OK;
    if (strcmp(path, "-") == 0)
        return pe_output_check_fd(STDOUT_FILENO, err);
    if (input_of(path, in, sizeof in))
        return refuse_input(path, in, err);
    /* the files a writer derives from the name: the raw pair, a directory's meta.json */
    char *bin = NULL, *json = NULL;
    posenc_status st = pe_raw_paths(path, &bin, &json, err);
    if (st != POSENC_OK)
        return st;
    if (input_of(bin, in, sizeof in))
        st = refuse_input(bin, in, err);
    else if (input_of(json, in, sizeof in))
        st = refuse_input(json, in, err);
    else if ((st = check_replace(path, err)) == POSENC_OK &&
             (st = check_replace(bin, err)) == POSENC_OK)
        st = check_replace(json, err);
    free(bin);
    free(json);
    size_t n = strlen(path);
    char *meta = st == POSENC_OK ? malloc(n + sizeof "/meta.json") : NULL;
    if (st == POSENC_OK && !meta)
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    if (meta) {
        snprintf(meta, n + sizeof "/meta.json", "%s/meta.json", path);
        if (input_of(meta, in, sizeof in))
            st = refuse_input(meta, in, err);
        free(meta);
    }
    return st;
}

static posenc_status not_regular(const char *path, mode_t mode, posenc_error *err)
{
    return posenc_seterr(err, POSENC_EFORMAT, "'%s': not a regular file (%s)", path,
                         S_ISFIFO(mode) ? "a FIFO" : S_ISSOCK(mode) ? "a socket" : "a device");
}

posenc_status pe_open_input(const char *path, int regular_only, FILE **fp, posenc_error *err)
{
    *fp = NULL;
    struct stat pre;
    /* a file opened by a derived name is looked at before open(2), which would block on a FIFO
     * without a writer; a path the user named may be a FIFO and waits for its writer, as cat
     * does */
    if (regular_only && stat(path, &pre) == 0 && !S_ISREG(pre.st_mode) && !S_ISDIR(pre.st_mode))
        return not_regular(path, pre.st_mode, err);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return posenc_seterr(err, POSENC_EIO, "cannot open '%s': %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        int e = errno;
        close(fd);
        return posenc_seterr(err, POSENC_EIO, "cannot open '%s': %s", path, strerror(e));
    }
    if (S_ISDIR(sb.st_mode)) {
        close(fd);
        return posenc_seterr(err, POSENC_EIO, "'%s': %s", path, strerror(EISDIR));
    }
    if (regular_only && !S_ISREG(sb.st_mode)) {
        close(fd);
        return not_regular(path, sb.st_mode, err);
    }
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        int e = errno;
        close(fd);
        return posenc_seterr(err, POSENC_EIO, "cannot open '%s': %s", path, strerror(e));
    }
    if (S_ISREG(sb.st_mode))
        input_add_stat(&sb, path);
    *fp = f;
    return POSENC_OK;
}

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

static posenc_status pe_tmp_create_at(const char *final_path, const char *target,
                                      char **tmp_path, FILE **fp, posenc_error *err);

posenc_status pe_tmp_create(const char *final_path, char **tmp_path, FILE **fp,
                                posenc_error *err)
{
    *tmp_path = NULL;
    *fp = NULL;
    char in[256];
    if (input_of(final_path, in, sizeof in))
        return refuse_input(final_path, in, err);
    posenc_status cst = check_replace(final_path, err);
    if (cst != POSENC_OK)
        return cst;
    if (is_special(final_path)) {
        FILE *f = fopen(final_path, "wb");
        if (!f)
            return posenc_seterr(err, POSENC_EIO, "cannot open '%s': %s", final_path,
                                 strerror(errno));
        *fp = f;
        return POSENC_OK; /* *tmp_path stays NULL: commit closes, discard closes */
    }
    char *target = link_target(final_path);
    if (!target)
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    posenc_status tst = pe_tmp_create_at(final_path, target, tmp_path, fp, err);
    free(target);
    return tst;
}

/* The temporary beside target, the file final_path names (itself, or where its links end). */
static posenc_status pe_tmp_create_at(const char *final_path, const char *target,
                                      char **tmp_path, FILE **fp, posenc_error *err)
{
    const char *slash = strrchr(target, '/');
    size_t dlen = slash ? (size_t)(slash - target) + 1 : 0;
    const char *base = target + dlen;
    if (*base == '\0')
        return posenc_seterr(err, POSENC_EINVAL, "'%s': not a file name", final_path);
    struct stat old;
    int replacing = stat(target, &old) == 0 && S_ISREG(old.st_mode);
    if (!replacing && stat(target, &old) == 0 && S_ISDIR(old.st_mode)) /* before any work */
        return posenc_seterr(err, POSENC_EIO, "cannot write '%s': %s", final_path,
                             strerror(EISDIR));
    {
        char dir[TMP_PATH];
        if (dlen == 0)
            snprintf(dir, sizeof dir, ".");
        else
            snprintf(dir, sizeof dir, "%.*s", (int)(dlen > 1 ? dlen - 1 : 1), target);
        sweep_stale(dir);
    }
    char mid[48];
    snprintf(mid, sizeof mid, ".posenc-tmp-%ld-XXXXXX-", (long)getpid());
    size_t mlen = strlen(mid), blen = strlen(base);
    /* any valid name fits: past NAME_MAX the temporary keeps the name's last bytes */
    if (mlen + blen > NAME_MAX) {
        base += mlen + blen - NAME_MAX;
        blen = NAME_MAX - mlen;
    }
    char *t = malloc(dlen + mlen + blen + 1);
    if (!t)
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    memcpy(t, target, dlen);
    memcpy(t + dlen, mid, mlen);
    memcpy(t + dlen + mlen, base, blen + 1);
    int fd = mkstemps(t, (int)blen + 1);
    if (fd < 0) {
        int e = errno;
        free(t);
        return posenc_seterr(err, POSENC_EIO, "cannot create '%s': %s", final_path, strerror(e));
    }
    /* mkstemp makes 0600; give the file the mode of the file it replaces, or the mode open(2)
     * would give a new one (0666 & ~umask) */
    (void)fchmod(fd, replacing ? old.st_mode & 07777 : 0666 & ~current_umask());
    FILE *f = fdopen(fd, "wb");
    if (!f) {
        int e = errno;
        close(fd);
        unlink(t);
        free(t);
        return posenc_seterr(err, POSENC_EIO, "cannot create '%s': %s", final_path, strerror(e));
    }
    tmp_register(t);
    *tmp_path = t;
    *fp = f;
    return POSENC_OK;
}

/* ---- committing: every output of a run as one unit ----
 * pe_tmp_commit queues a finished temporary; the outermost pe_tmp_group_end (or a
 * pe_tmp_commit outside any group, a group of one) renames the queue into place together:
 *
 *   1. the directories of the targets are locked (flock(2) on the directory itself, in device
 *      and inode order), so that two runs writing one output commit one after the other and
 *      never leave a mixed pair; nothing is created for the lock;
 *   2. a target that is a directory fails the group before anything is renamed;
 *   3. each existing target gets a hard link beside it (a ".posenc-tmp-" name: a killed run's
 *      is swept as stale), then each temporary is renamed onto its target; when a rename
 *      fails, the targets already renamed get their old file back (or are removed when they
 *      were new) and every temporary goes;
 *   4. the directories are fsynced (each temporary was fsynced before it was queued) and the
 *      links removed.
 *
 * A signal that arrives while the renames run is held until they end (posenc_tmp_signal):
 * the handler then sees either a committed run or one with its temporaries to remove. The
 * group is per thread; the signal state is the process's. */
struct pending {
    char *tmp, *final, *target;
};
static _Thread_local struct {
    int depth, failed;
    size_t n, cap;
    struct pending *v;
} grp;

enum { ST_IDLE, ST_COMMITTING, ST_COMMITTED, ST_DYING };
static atomic_int commit_state;
static volatile sig_atomic_t held_sig;

int posenc_tmp_signal(int sig)
{
    int s = ST_IDLE;
    if (atomic_compare_exchange_strong(&commit_state, &s, ST_DYING)) {
        posenc_tmp_remove_all();
        return POSENC_TMP_SIGNAL_DIE;
    }
    if (s == ST_COMMITTING) {
        held_sig = sig;
        return POSENC_TMP_SIGNAL_HELD;
    }
    if (s == ST_COMMITTED)
        return POSENC_TMP_SIGNAL_DONE;
    posenc_tmp_remove_all(); /* dying already: another thread's signal */
    return POSENC_TMP_SIGNAL_DIE;
}

static void pending_free(struct pending *p, int remove_tmp)
{
    if (p->tmp) {
        if (remove_tmp)
            unlink(p->tmp);
        tmp_unregister(p->tmp);
    }
    free(p->tmp);
    free(p->final);
    free(p->target);
    memset(p, 0, sizeof *p);
}

static void queue_clear(int remove_tmp)
{
    for (size_t i = 0; i < grp.n; i++)
        pending_free(&grp.v[i], remove_tmp);
    free(grp.v);
    grp.v = NULL;
    grp.n = grp.cap = 0;
}

static int queue_reserve(void)
{
    if (grp.n < grp.cap)
        return 0;
    size_t cap = grp.cap ? 2 * grp.cap : 4;
    struct pending *v = realloc(grp.v, cap * sizeof *v);
    if (!v)
        return -1;
    grp.v = v;
    grp.cap = cap;
    return 0;
}

void pe_tmp_group_begin(void)
{
    if (grp.depth++ == 0)
        grp.failed = 0;
}

void pe_tmp_group_abort(void)
{
    queue_clear(1);
    if (grp.depth > 0 && --grp.depth > 0)
        grp.failed = 1; /* the outer group's end fails too */
}

/* A directory of the group, open and locked. */
struct locked_dir {
    int fd;
    dev_t dev;
    ino_t ino;
};

static int cmp_dir(const void *a, const void *b)
{
    const struct locked_dir *x = a, *y = b;
    if (x->dev != y->dev)
        return x->dev < y->dev ? -1 : 1;
    return x->ino < y->ino ? -1 : x->ino > y->ino;
}

static int open_dir_of(const char *target, struct locked_dir *d)
{
    const char *sl = strrchr(target, '/');
    char dir[TMP_PATH];
    if (!sl)
        snprintf(dir, sizeof dir, ".");
    else
        snprintf(dir, sizeof dir, "%.*s", (int)(sl == target ? 1 : sl - target), target);
    struct stat sb;
    d->fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (d->fd < 0 || fstat(d->fd, &sb) != 0) {
        if (d->fd >= 0)
            close(d->fd);
        d->fd = -1;
        return -1;
    }
    d->dev = sb.st_dev;
    d->ino = sb.st_ino;
    return 0;
}

/* A new name for a hard link to target, beside it; malloc'd, NULL when none could be made. */
static char *backup_of(const char *target)
{
    char *t = NULL;
    FILE *fp = NULL;
    if (pe_tmp_create_at(target, target, &t, &fp, NULL) != POSENC_OK)
        return NULL;
    fclose(fp);
    unlink(t); /* the name stays this process's: its pid is in it */
    tmp_unregister(t);
    if (link(target, t) != 0) {
        free(t);
        return NULL;
    }
    return t;
}

static posenc_status group_commit(posenc_error *err)
{
    size_t n = grp.n, nd = 0, done = 0;
    struct pending *v = grp.v;
    char **bk = calloc(n ? n : 1, sizeof *bk);
    char *existed = calloc(n ? n : 1, 1);
    struct locked_dir *dirs = calloc(n ? n : 1, sizeof *dirs);
    posenc_status st = POSENC_OK;
    int e = 0;
    const char *bad = NULL;
    int s = ST_IDLE;
    if (!bk || !dirs || !existed) {
        free(existed);
        free(bk);
        free(dirs);
        queue_clear(1);
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    }
    if (!atomic_compare_exchange_strong(&commit_state, &s, ST_COMMITTING) &&
        (s != ST_COMMITTED ||
         !atomic_compare_exchange_strong(&commit_state, &s, ST_COMMITTING))) {
        free(existed);
        free(bk);
        free(dirs);
        queue_clear(1);
        return posenc_seterr(err, POSENC_EIO, "'%s': not written: the run was interrupted",
                             n ? v[0].final : "");
    }
    int before = s; /* idle or committed: what a failed group goes back to */
    for (size_t i = 0; i < n; i++) {
        struct locked_dir d;
        if (open_dir_of(v[i].target, &d) != 0)
            continue; /* the rename will say why */
        size_t k;
        for (k = 0; k < nd; k++)
            if (dirs[k].dev == d.dev && dirs[k].ino == d.ino)
                break;
        if (k < nd)
            close(d.fd);
        else
            dirs[nd++] = d;
    }
    qsort(dirs, nd, sizeof *dirs, cmp_dir);
    for (size_t k = 0; k < nd; k++)
        while (flock(dirs[k].fd, LOCK_EX) != 0 && errno == EINTR)
            ;
    for (size_t i = 0; i < n && !bad; i++) {
        struct stat sb;
        if (stat(v[i].target, &sb) == 0 && S_ISDIR(sb.st_mode)) {
            bad = v[i].final;
            e = EISDIR;
        }
    }
    for (size_t i = 0; i < n && !bad; i++) {
        struct stat sb;
        if (lstat(v[i].target, &sb) == 0) {
            existed[i] = 1;
            /* no link (a file system without them): that file cannot be restored */
            bk[i] = S_ISREG(sb.st_mode) ? backup_of(v[i].target) : NULL;
        }
    }
    for (; done < n && !bad; done++)
        if (rename(v[done].tmp, v[done].target) != 0) {
            e = errno;
            bad = v[done].final;
            break;
        }
    if (bad) {
        for (size_t j = done; j-- > 0;) { /* the old files back */
            if (bk[j] && rename(bk[j], v[j].target) == 0) {
                free(bk[j]);
                bk[j] = NULL;
            } else if (!existed[j]) {
                unlink(v[j].target);
            }
        }
        st = posenc_seterr(err, POSENC_EIO, "cannot write '%s': %s", bad, strerror(e));
    }
    for (size_t k = 0; k < nd; k++) {
        if (!bad)
            fsync(dirs[k].fd);
    }
    for (size_t i = 0; i < n; i++)
        if (bk[i]) {
            unlink(bk[i]);
            free(bk[i]);
        }
    for (size_t k = 0; k < nd; k++)
        close(dirs[k].fd); /* and its lock */
    for (size_t i = 0; i < n; i++) {
        if (i < done && !bad) {
            tmp_unregister(v[i].tmp);
            free(v[i].tmp);
            v[i].tmp = NULL;
        }
    }
    queue_clear(1);
    free(existed);
    free(bk);
    free(dirs);
    atomic_store(&commit_state, bad ? before : ST_COMMITTED);
    int sig = held_sig;
    if (sig) {
        held_sig = 0;
        raise(sig); /* now the handler sees the run committed, or dies of it */
    }
    return st;
}

posenc_status pe_tmp_group_end(posenc_error *err)
{
    if (grp.depth > 0 && --grp.depth > 0)
        return POSENC_OK;
    if (grp.failed) {
        grp.failed = 0;
        queue_clear(1);
        return posenc_seterr(err, POSENC_EIO, "an output of the set was not written");
    }
    return group_commit(err);
}

posenc_status pe_tmp_commit(FILE *fp, const char *tmp_path, const char *final_path,
                                posenc_error *err)
{
    int e = 0;
    if (fp) {
        if (fflush(fp) != 0 || ferror(fp))
            e = errno ? errno : EIO;
        /* the data on disk before the rename that makes it the file (EINVAL: a device) */
        if (!e && tmp_path && fsync(fileno(fp)) != 0 && errno != EINVAL)
            e = errno;
        if (fclose(fp) != 0 && !e)
            e = errno ? errno : EIO;
    } else if (tmp_path) {
        int fd = open(tmp_path, O_RDONLY | O_CLOEXEC);
        if (fd < 0 || fsync(fd) != 0)
            e = errno;
        if (fd >= 0)
            close(fd);
    }
    struct pending p = { 0 };
    if (!e && tmp_path) {
        p.tmp = strdup(tmp_path);
        p.final = strdup(final_path);
        p.target = link_target(final_path);
        if (!p.tmp || !p.final || !p.target || queue_reserve() != 0)
            e = ENOMEM;
    }
    if (e) {
        /* fp is closed either way; the temporary goes so that nothing partial remains */
        if (tmp_path) {
            unlink(tmp_path);
            tmp_unregister(tmp_path);
        }
        free(p.tmp);
        free(p.final);
        free(p.target);
        return posenc_seterr(err, POSENC_EIO, "cannot write '%s': %s", final_path, strerror(e));
    }
    if (!tmp_path)
        return POSENC_OK; /* a device, written in place */
    grp.v[grp.n++] = p;
    if (grp.depth > 0)
        return POSENC_OK; /* the group's end renames it */
    return group_commit(err);
}

void pe_tmp_writeout(FILE *fp, pe_writeout *wo, uint64_t n)
{
    if (!fp)
        return;
    wo->pending += n;
    if (wo->pending < PE_WRITEOUT_BYTES)
        return;
    wo->pending = 0;
    if (fflush(fp) != 0)
        return; /* ferror stays set: the commit reports it */
#ifdef SYNC_FILE_RANGE_WRITE
    /* the whole file (nbytes 0: to its end); pages already under write-out or clean are
     * skipped, so each call submits what was written since the last one; git/git's wrapper.c
     * (git_fsync, FSYNC_WRITEOUT_ONLY) issues the same call for its batched fsyncs */
    (void)sync_file_range(fileno(fp), 0, 0, SYNC_FILE_RANGE_WRITE);
#endif
}

void pe_tmp_discard(FILE *fp, const char *tmp_path)
{
    if (fp)
        fclose(fp);
    if (tmp_path) {
        unlink(tmp_path);
        tmp_unregister(tmp_path);
    }
}

char *pe_writer_meta_json(const posenc_writer *w)
{
    pe_strbuf b = { 0 };
    pe_strbuf_puts(&b, "{");
    for (size_t i = 0; i < w->nmeta; i++) {
        if (i)
            pe_strbuf_puts(&b, ", ");
        pe_strbuf_json_string(&b, w->meta_keys[i]);
        pe_strbuf_puts(&b, ": ");
        pe_strbuf_puts(&b, w->meta_vals[i]);
    }
    pe_strbuf_puts(&b, "}");
    return pe_strbuf_finish(&b);
}

posenc_status pe_read_exact(FILE *fp, void *buf, size_t n, const char *path, const char *what,
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

posenc_status pe_write_exact(FILE *fp, const void *buf, size_t n, const char *path,
                                 posenc_error *err)
{
    if (n && fwrite(buf, 1, n, fp) != n)
        return posenc_seterr(err, POSENC_EIO, "cannot write '%s': %s", path,
                             strerror(errno ? errno : EIO));
    return POSENC_OK;
}

/* ---------------------------------------------------------------------------------------------
 * little-endian spans of a file */

int pe_host_is_le(void)
{
    const uint16_t one = 1;
    return *(const unsigned char *)&one == 1;
}

typedef struct span_reader {
    FILE *fp;
    char *path;
} span_reader;

posenc_status pe_span_open(posenc_reader *r, const char *data_path, uint64_t offset,
                               posenc_error *err)
{
    span_reader *sr = calloc(1, sizeof *sr);
    if (!sr || !(sr->path = strdup(data_path))) {
        free(sr);
        return posenc_seterr(err, POSENC_ENOMEM, "out of memory");
    }
    r->impl = sr;
    posenc_status st = pe_open_input(data_path, 1, &sr->fp, err);
    if (st == POSENC_OK && (offset > (uint64_t)INT64_MAX ||
                            fseeko(sr->fp, (off_t)offset, SEEK_SET) != 0))
        st = posenc_seterr(err, POSENC_EIO, "'%s': seek failed: %s", data_path,
                           strerror(errno ? errno : EINVAL));
    if (st != POSENC_OK)
        pe_span_close(r);
    return st;
}

posenc_status pe_span_read(posenc_reader *r, void *buf, uint64_t nelem, const char *what,
                               posenc_error *err)
{
    span_reader *sr = r->impl;
    size_t es = posenc_dtype_size(r->info.dtype);
    if (nelem > SIZE_MAX / es)
        return posenc_seterr(err, POSENC_ERANGE, "'%s': read too large", sr->path);
    size_t nb = (size_t)nelem * es;
    if (fread(buf, 1, nb, sr->fp) != nb) {
        if (ferror(sr->fp))
            return posenc_seterr(err, POSENC_EIO, "'%s': read error: %s", sr->path,
                                 strerror(errno));
        return posenc_seterr(err, POSENC_EFORMAT, "'%s': %s '%s' is truncated", sr->path, what,
                             r->info.name);
    }
    if (!pe_host_is_le() && es > 1)
        posenc_byteswap(buf, es, (size_t)nelem);
    return POSENC_OK;
}

void pe_span_close(posenc_reader *r)
{
    span_reader *sr = r->impl;
    if (sr) {
        if (sr->fp)
            fclose(sr->fp);
        free(sr->path);
        free(sr);
    }
    r->impl = NULL;
}

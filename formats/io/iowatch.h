/* formats/io/iowatch.h: one process-wide observer of the bytes the io layer streams, so that a
 * program can show progress without a copy of it in every streaming loop. Internal (the pe_
 * prefix): cmd/util_progress.c is its only user. Off until pe_io_watch is called. */
#ifndef POSENC_IOWATCH_H
#define POSENC_IOWATCH_H

#include <stdint.h>

enum {
    PE_WATCH_WRITES = 1, /* writers: declared array bytes are the total, written bytes done */
    PE_WATCH_READS = 2   /* readers: the opened array's bytes are the total, read bytes done */
};

/* Called with the bytes to add to the total and to the bytes done; from whichever thread
 * streams, so it must be thread-safe. */
typedef void (*pe_watch_fn)(void *ctx, uint64_t add_total, uint64_t add_done);

/* Watch what (PE_WATCH_* bits; 0 turns the observer off) with fn(ctx, ...). Call before the
 * streaming starts, not concurrently with it. */
void pe_io_watch(int what, pe_watch_fn fn, void *ctx);

#endif

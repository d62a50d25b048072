/* formats/engines/applyrun.h: the streaming pipeline of posenc apply: read each input in chunks of whole
 * head vectors, rotate them (lib/encodings/apply.c) and hand them to a writer (formats/io/io.c), with a
 * second thread reading and rotating the next chunk while this one writes the previous one.
 * Memory: PE_APPLY_NSLOT chunks of PE_APPLY_CHUNK_BYTES, whatever the inputs' sizes. Internal. */
#ifndef PE_APPLYRUN_H
#define PE_APPLYRUN_H

#include <stddef.h>
#include <stdint.h>

#include "posenc/apply.h"
#include "posenc/io.h"

#ifndef PE_APPLY_CHUNK_BYTES
#define PE_APPLY_CHUNK_BYTES ((size_t)256 << 10) /* per slot: stays in L2 between read and write */
#endif
#define PE_APPLY_NSLOT 4

/* One input array streamed into the current array of a writer. */
typedef struct pe_apply_job {
    posenc_reader *r;          /* open reader; NULL: opened from c and index when the job starts
                                  and closed when it ends, so a container of many arrays holds
                                  one reader at a time */
    posenc_container *c;
    size_t index;
    posenc_writer *w;          /* borrowed; jobs sharing one writer run in its declaration order */
    const posenc_apply *ap;    /* the rotation; NULL: copied unchanged (a layer without RoPE),
                                  converted to out_dt */
    posenc_apply_shape sh;
    posenc_dtype in_dt, out_dt;
    uint64_t nvec;             /* head vectors */
    size_t D;                  /* head_dim */
} pe_apply_job;

/* Run every job in order: threaded when allowed (not for HDF5, which is not thread-safe), else
 * read-rotate-write in this thread. Readers opened here are closed here. */
posenc_status pe_apply_run(pe_apply_job *jobs, size_t njobs, int threaded, posenc_error *err);

#endif

/* cmd/util_progress.h: one progress line on standard error while a long run streams data. */
#ifndef POSENC_CMD_PROGRESS_H
#define POSENC_CMD_PROGRESS_H

#include <stdint.h>

/* Begin counting for command cmd: total units expected (more may be added with
 * cmd_progress_total), unit "B" for bytes (shown as KiB, MiB, GiB) or a plural noun ("rows").
 * The line appears only when standard error is a terminal, -q was not given, and the work is
 * still running after the first second (POSENC_PROGRESS_DELAY); it is then redrawn at most five
 * times a second (POSENC_PROGRESS_INTERVAL): "posenc CMD: DONE of TOTAL (P%), RATE/s, ETA M:SS". */
void cmd_progress_start(const char *cmd, uint64_t total, const char *unit);
/* Add to the total and to the work done. Thread-safe: streaming threads call them directly. */
void cmd_progress_total(uint64_t add);
void cmd_progress_update(uint64_t add_done);
/* End: a line on screen is erased and replaced by "posenc CMD: DONE in S s (RATE/s)" and a
 * newline. A command that prints a summary calls it first, so that the line ends before the
 * summary starts; later calls do nothing. */
void cmd_progress_finish(void);
/* Erase a line on screen (before a message, so that it stays one line); the next update may
 * draw it again. */
void cmd_progress_clear(void);
/* Async-signal-safe: erase a line on screen (carriage return, erase line), from a signal
 * handler before the process dies of the signal. */
void cmd_progress_signal(void);
/* -q: no progress line for the rest of the run. */
void cmd_progress_quiet(void);
/* Start counting what the io layer streams (PE_WATCH_WRITES or PE_WATCH_READS of
 * formats/io/iowatch.h): the bytes of the arrays writers declare or readers open are the total. */
void cmd_progress_watch(const char *cmd, int what);

#endif

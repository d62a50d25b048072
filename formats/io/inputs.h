/* formats/io/inputs.h: the posenc program's rule that no output of a run replaces one of its
 * inputs. Internal (the pe_ prefix, not exported by libposenc.so): it is the command line's
 * policy, process-wide because every reader records what it opens, and off until the program
 * turns it on (cmd/posenc.c), so a library caller's writers replace files as asked.
 *
 * Every file a run reads is recorded by device and inode (the readers do it; the program adds
 * what it reads by other means, such as a regular file on standard input). While the guard is
 * on, a writer refuses, with POSENC_EOVERWRITE, to create a file that is one of them, through a
 * symlink or a second name included, and so does pe_output_check for the files an output path
 * implies (formats/io/fileutil.c). */
#ifndef POSENC_INPUTS_H
#define POSENC_INPUTS_H

#include "posenc/error.h"

/* pe_inputs_guard(1) turns the rule on for the rest of the process, pe_inputs_guard(0) turns it
 * off and forgets the inputs. */
void pe_inputs_guard(int on);
/* While the guard is on, a writer also refuses (POSENC_EOVERWRITE) to replace a regular file
 * that is read-only or owned by another user; pe_outputs_force(1) (--force) allows it. */
void pe_outputs_force(int on);
/* Record path, or the open file fd named name, as an input (no-ops while the guard is off). */
void pe_input_add(const char *path);
void pe_input_add_fd(int fd, const char *name);
/* POSENC_EOVERWRITE when writing path would replace an input: path itself, and the files a
 * writer derives from it (a raw sidecar X.json, a directory's meta.json). */
posenc_status pe_output_check(const char *path, posenc_error *err);
/* POSENC_EOVERWRITE when the open file fd (standard output, for "-") is an input: a shell
 * redirection such as '>> q.npy' or '1<> q.npy' makes it one. pe_output_check("-") checks
 * STDOUT_FILENO. */
posenc_status pe_output_check_fd(int fd, posenc_error *err);

#endif

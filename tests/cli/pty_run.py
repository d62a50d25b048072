"""Run a command with standard error on a pseudo-terminal (raw mode: no newline translation).
Usage: pty_run.py [--signal SIG] STDERR_FILE STDOUT CMD [ARGS...]. STDOUT is a file to write
standard output to, "tty": the same terminal (as in an interactive shell), or "close:N": a pipe
whose reader takes N bytes and closes it, with SIGPIPE ignored in the command (so that the closed
pipe is a write error, not a signal). --signal SIG (INT, TERM ...): send it to the command once
the terminal has received a byte (its progress line). Writes the bytes the terminal received to
STDERR_FILE and exits with the command's status (128 + N when signal N killed it)."""
import os
import signal
import subprocess
import sys
import threading
import tty

args = sys.argv[1:]
sig = None
if args[0] == "--signal":
    sig = getattr(signal, "SIG" + args[1])
    args = args[2:]
err_path, out_spec, cmd = args[0], args[1], args[2:]
master, slave = os.openpty()
tty.setraw(slave)  # the bytes as written: no \n -> \r\n
got = bytearray()
first = threading.Event()


def drain():
    while True:
        try:
            b = os.read(master, 65536)
        except OSError:  # EIO: every writer of the terminal has closed it
            return
        if not b:
            return
        got.extend(b)
        first.set()


t = threading.Thread(target=drain)
t.start()
if out_spec.startswith("close:"):
    want = int(out_spec[6:])
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=slave,
                         preexec_fn=lambda: signal.signal(signal.SIGPIPE, signal.SIG_IGN))
    n = 0
    while n < want:
        b = p.stdout.read(min(65536, want - n))
        if not b:
            break
        n += len(b)
    p.stdout.close()
elif out_spec == "tty":
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=slave, stderr=slave)
else:
    with open(out_spec, "wb") as out:
        p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=slave)
os.close(slave)
if sig is not None:
    first.wait(60)
    if p.poll() is None:
        p.send_signal(sig)
rc = p.wait()
t.join()
with open(err_path, "wb") as f:
    f.write(got)
sys.exit(rc if rc >= 0 else 128 - rc)

"""Imported by the fork server only (see :data:`minhashdup.engine.parallel._PRELOAD`), never by the
main process: the fork server remembers SIGINT's handler as it stands after its preloads and
gives it to every worker it forks. Set to "ignore" here, a worker ignores Ctrl-C from its first
instruction, before the pool's initializer could say so; without it, a Ctrl-C landing while a
worker started made it print a cut traceback ("Process ForkServerProcess-1:").

Here too the index of pygments' lexers by file name is built, once: every worker forked
afterwards has it. Built by each worker instead, it cost each half a second where a pygments
plugin is installed (finding it reads every installed package's entry points, and loading
IPython's lexers imports IPython), all before the worker's first file."""

import contextlib
import signal

signal.signal(signal.SIGINT, signal.SIG_IGN)

from minhashdup.source.tokens import index_names  # noqa: E402  (SIGINT ignored first)

with contextlib.suppress(Exception):  # a plugin that fails to load fails again in each worker, as before
    index_names()
# The fork server gives its workers each signal's handler as it stands after the preloads: a
# plugin that set its own for SIGINT on import must not pass it on. (A plugin that started a
# thread on import would make this process fork with threads running; none of pygments' known
# plugins does.)
signal.signal(signal.SIGINT, signal.SIG_IGN)

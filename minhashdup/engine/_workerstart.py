"""Imported by the fork server only (see :data:`minhashdup.engine.parallel._PRELOAD`), never by the
main process: the fork server remembers SIGINT's handler as it stands after its preloads and
gives it to every worker it forks. Set to "ignore" here, a worker ignores Ctrl-C from its first
instruction, before the pool's initializer could say so; without it, a Ctrl-C landing while a
worker started made it print a cut traceback ("Process ForkServerProcess-1:")."""

import signal

signal.signal(signal.SIGINT, signal.SIG_IGN)

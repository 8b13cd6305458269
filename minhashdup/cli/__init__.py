"""The ``minhashdup`` command: the group, its commands, and the one place where a failure
becomes a message on stderr and an exit code (:func:`exit_code`).

Each command (:mod:`~minhashdup.cli.scan`, :mod:`~minhashdup.cli.check`,
:mod:`~minhashdup.cli.tools`, :mod:`~minhashdup.cli.cache`) parses its options, makes one
library call, renders the result and returns its :class:`~minhashdup.errors.ExitCode`;
errors are raised, not caught, there.
"""

from __future__ import annotations

from minhashdup._pathguard import collector_paused

with collector_paused():  # as the package's (see there)
    import errno
    import gc
    import importlib
    import io
    import os
    import signal
    import sys
    import threading
    import time
    from typing import Any

    import click

    from minhashdup import __version__
    from minhashdup.cli.options import CONFIG_FILE_KEY, flag
    from minhashdup.cli.output import silence
    from minhashdup.cli.scan import scan_command
    from minhashdup.errors import ExitCode, MinhashdupError
    from minhashdup.report.terminal import printable

#: The commands imported when first asked for (a scan, the usual run, needs none of them).
_LAZY = {
    "check": ("minhashdup.cli.check", "check_command"),
    "cache": ("minhashdup.cli.cache", "cache_group"),
    "tune": ("minhashdup.cli.tools", "tune_command"),
    "evaluate": ("minhashdup.cli.tools", "evaluate_command"),
    "compare": ("minhashdup.cli.tools", "compare_command"),
}


class _Group(click.Group):
    """A group whose ``main`` turns every failure into one line and a documented exit code."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *_LAZY})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in _LAZY and cmd_name not in self.commands:
            module, name = _LAZY[cmd_name]
            self.add_command(getattr(importlib.import_module(module), name))
        return super().get_command(ctx, cmd_name)

    def resolve_command(self, ctx: click.Context, args: list[str]) -> Any:
        if args and args[0] not in {*self.commands, *_LAZY}:  # unknown: click suggests among them all
            for name in _LAZY:
                self.get_command(ctx, name)
        return super().resolve_command(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except BrokenPipeError:  # before click's own handler, which would exit 1 (our gate's code)
            silence(sys.stdout)  # the reader (e.g. `| head`) went away: not an error of ours
            return ExitCode.OK

    def main(self, *args: Any, **kwargs: Any) -> Any:
        kwargs["standalone_mode"] = False
        # A descriptor closed when the process started (`>&-`) leaves its stream None: the
        # report then fails to write like any closed output (one line, exit 2; --output still
        # works), and notices for a closed stderr have nobody to read them.
        if sys.stdout is None:
            sys.stdout = _ClosedOutput()
        if sys.stderr is None:
            sys.stderr = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - for the process's life
        for stream in (sys.stdout, sys.stderr):
            # Paths that are not valid UTF-8 are printed as \udcXX escapes, never a crash.
            if isinstance(stream, io.TextIOWrapper):
                stream.reconfigure(errors="backslashreplace")
        try:
            code = super().main(*args, **kwargs)
        except (Exception, KeyboardInterrupt, _Terminated) as exc:
            code = _exit_code_held(exc)
        if _sigterms and code != ExitCode.TERMINATED:  # swallowed, and the command ended before it came again
            code = _exit_code_held(_Terminated())
        global _ending
        _ending = True  # a SIGTERM sent again now would only cut the exit short
        sys.exit(int(code or 0))


class _ClosedOutput(io.TextIOBase):
    """Standard output whose descriptor was closed before the process started: every write
    fails as writing to a closed descriptor does."""

    def write(self, text: str) -> int:
        raise OSError(errno.EBADF, os.strerror(errno.EBADF))

    def flush(self) -> None:
        pass


class _Terminated(BaseException):
    """SIGTERM, raised in the main thread so that the scan ends like on Ctrl-C: workers
    stopped (they hold stdout open), no partial ``--output`` left, exit 143."""


#: SIGTERMs handled by this process: after one, whatever failure follows (a clean-up turning
#: its exception into another on the way out) is the command being stopped, exit 143.
_sigterms = 0

#: Set when the command has its exit code: a swallowed SIGTERM is not sent again then.
_ending = False


def _on_sigterm(signum: int, frame: object) -> None:
    """SIGTERM handler of the ``minhashdup`` process (set by :func:`main`, not by the library)."""
    global _sigterms
    _sigterms += 1
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a second SIGTERM ends the process at once
    raise _Terminated


def _redeliver_swallowed(previous: Any) -> Any:
    """An unraisable-exception hook that delivers a swallowed SIGTERM again.

    A signal handler runs in whatever Python code the main thread runs, finalisers included
    (a weak reference's callback, as importlib's module locks have; a ``__del__``). Python
    cannot raise out of those: it prints the exception and goes on, and the scan would finish
    as if no SIGTERM came. This hook sets the handler again and has a thread send SIGTERM to
    the main thread a moment later, once the finaliser is over (sent now, it would be raised
    in the hook, and swallowed again), unless another SIGTERM was handled meanwhile or the
    command has ended (then its exit code is 143 all the same). Other exceptions go to
    ``previous``.
    """

    def hook(args: Any) -> None:
        if isinstance(args.exc_value, _Terminated):
            signal.signal(signal.SIGTERM, _on_sigterm)
            again = threading.Thread(target=_send_sigterm, args=(_sigterms,), name="minhashdup-sigterm", daemon=True)
            again.start()
        else:
            previous(args)

    return hook


def _send_sigterm(handled: int) -> None:
    time.sleep(_AGAIN)
    if _sigterms != handled or _ending:
        return
    if hasattr(signal, "pthread_kill"):
        signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGTERM)
    else:
        os.kill(os.getpid(), signal.SIGTERM)


#: Seconds between a SIGTERM swallowed by a finaliser and its second delivery.
_AGAIN = 0.01


def _exit_code_held(exc: BaseException) -> ExitCode | int:
    """:func:`exit_code`, and 143 if a SIGTERM comes while it stops the workers (after Ctrl-C
    or a failure): not a traceback."""
    try:
        return exit_code(exc)
    except _Terminated:
        return exit_code(_Terminated())


def exit_code(exc: BaseException) -> ExitCode | int:
    """What a failure means on the command line: its line on stderr, and the exit code.

    A domain error of the library names its parameters as flags here (``threshold`` ->
    ``--threshold``, see :func:`~minhashdup.cli.options.flag`); anything unexpected is an
    internal error, without a traceback unless ``MINHASHDUP_DEBUG`` is set.
    """
    if isinstance(exc, click.exceptions.Exit):  # --help, --version
        return exc.exit_code
    terminated = _sigterms > 0 or isinstance(exc, _Terminated)  # whatever failed after it
    if terminated or isinstance(exc, (click.exceptions.Abort, KeyboardInterrupt)):
        pools = sys.modules.get("minhashdup.engine.parallel")  # not imported: no worker to stop
        if pools is not None:
            pools.stop_workers()
        click.echo("minhashdup: terminated" if terminated else "minhashdup: interrupted", err=True)
        return ExitCode.TERMINATED if terminated else ExitCode.INTERRUPTED
    if isinstance(exc, click.ClickException):
        _error(exc.format_message() + _click_hint(exc))
        return ExitCode.USAGE
    if isinstance(exc, MinhashdupError):
        _error(exc.spelled(flag))
        return ExitCode.USAGE
    if os.environ.get("MINHASHDUP_DEBUG"):
        raise exc
    click.echo(
        f"minhashdup: internal error: {type(exc).__name__}: {printable(str(exc))}; please report it "
        "(MINHASHDUP_DEBUG=1 shows the traceback)",
        err=True,
    )
    return ExitCode.INTERNAL


def _error(message: str) -> None:
    click.echo(f"minhashdup: error: {printable(message)}", err=True)


def _click_hint(exc: click.ClickException) -> str:
    """Where a bad value came from (a config file), or where to read about the command."""
    ctx, param = getattr(exc, "ctx", None), getattr(exc, "param", None)
    if isinstance(exc, click.BadParameter) and ctx and param and param.name in (ctx.default_map or {}):
        return f" (set in {ctx.meta.get(CONFIG_FILE_KEY)})"
    if isinstance(exc, click.UsageError) and exc.ctx is not None:
        return f" (see '{exc.ctx.command_path} --help')"
    return ""


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="minhashdup")
def cli() -> None:
    """Find near-duplicate files in a source tree: MinHash and LSH find candidates,
    an exact Jaccard check on token shingles verifies them."""


cli.add_command(scan_command)


def main() -> None:
    """Entry point of the ``minhashdup`` command and ``python -m minhashdup``."""
    # What the imports made lives as long as the process: the cyclic collector need not walk
    # it again, during the run nor at exit (where walking it took a warm scan ~7 ms).
    gc.freeze()
    # A scan keeps what it makes to the end (each file's result, then each pair): collections at
    # Python's default pace (every 700 new objects) found almost nothing to free and walked all of
    # it again each time: 0.40-0.45 s of four Go releases' scan (45k pairs), 0.14-0.19 s at this
    # pace, at the same peak memory. Worker processes keep the default (their collections are few).
    gc.set_threshold(20_000, 10, 10)
    _handle_sigterm()
    cli.main(prog_name="minhashdup")


def _handle_sigterm() -> None:
    """SIGTERM ends this process like Ctrl-C, with exit code 143 (see :class:`_Terminated`)."""
    signal.signal(signal.SIGTERM, _on_sigterm)
    sys.unraisablehook = _redeliver_swallowed(sys.unraisablehook)

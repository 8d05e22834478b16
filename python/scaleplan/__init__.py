"""scaleplan from Python: plan LLM training at scale before reserving GPUs.

Each function runs one scaleplan command in this process, through the C
library (include/scaleplan.h), and returns the document that
``scaleplan COMMAND ... --json`` prints, as a dict::

    import scaleplan
    r = scaleplan.sim(model="gpt3-175b", gpu="a100-80g", gpus=64, tp=8, pp=8,
                      global_batch=64, sequence_parallel=True)
    print(r["step_time_s"], r["mfu"])

Keyword names are the command's flags with dashes as underscores
(``global_batch`` is ``--global-batch``); ``True`` turns a switch on,
``False`` and ``None`` leave a flag out, a list gives a flag once per item
(``validate(log=["a.log", "b.log"], ...)``), and ``args=[...]`` holds bare
words (``catalog(args=["gpus"])``). Bad input raises :class:`InputError`
with the command line's own one-line message; other failures raise
:class:`Error`. A :class:`Context` keeps the parsed catalog between calls;
the module-level functions use one context per thread.

The library is found in ``$SCALEPLAN_LIB``, next to this package, in the
source tree's ``bin/``, or on the system's library path.
"""

import ctypes
import ctypes.util
import json
import os
import tempfile
import threading

__all__ = ["Context", "Error", "InputError", "sim", "step_time", "plan", "reliability",
           "budget", "validate", "model", "catalog", "cluster", "power", "export",
           "to_dataframe", "abi_version",
           "version"]

_ABI = 1
_OK, _RUNTIME, _INPUT = 0, 1, 2


class Error(Exception):
    """A command failed for a reason other than its input (exit status 1).

    ``message`` is the command line's one-line message; ``document`` is the
    document the command produced before failing, when it produced one (a
    ``sim`` of a layout that does not fit), else None.
    """

    def __init__(self, message, document=None):
        super().__init__(message)
        self.message = message
        self.document = document


class InputError(Error, ValueError):
    """The input was wrong: a flag, a value, a file (exit status 2)."""


def _candidates():
    here = os.path.dirname(os.path.abspath(__file__))
    env = os.environ.get("SCALEPLAN_LIB")
    if env:
        yield env
    yield os.path.join(here, "libscaleplan.so")
    yield os.path.join(here, "..", "..", "bin", "libscaleplan.so")
    found = ctypes.util.find_library("scaleplan")
    if found:
        yield found


def _load():
    tried = []
    for path in _candidates():
        if os.path.sep in path and not os.path.exists(path):
            tried.append(path)
            continue
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            tried.append("%s (%s)" % (path, e))
            continue
        lib.sp_abi_version.restype = ctypes.c_int
        if lib.sp_abi_version() != _ABI:
            raise ImportError("%s has ABI %d; this module needs %d (rebuild: make lib)"
                              % (path, lib.sp_abi_version(), _ABI))
        lib.sp_version.restype = ctypes.c_char_p
        lib.sp_context_new.restype = ctypes.c_void_p
        lib.sp_context_free.argtypes = [ctypes.c_void_p]
        lib.sp_last_error.restype = ctypes.c_char_p
        lib.sp_last_error.argtypes = [ctypes.c_void_p]
        lib.sp_free.argtypes = [ctypes.c_void_p]
        lib.sp_run.restype = ctypes.c_int
        lib.sp_run.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p,
                               ctypes.POINTER(ctypes.c_void_p)]
        lib.sp_step_time.restype = ctypes.c_int
        lib.sp_step_time.argtypes = [ctypes.c_void_p, ctypes.c_char_p,
                                     ctypes.POINTER(ctypes.c_double)]
        return lib
    raise ImportError("libscaleplan.so not found (tried: %s); build it with `make lib` "
                      "or set SCALEPLAN_LIB" % ", ".join(tried))


_lib = _load()


def abi_version():
    """The library's ABI version (the module checks it on import)."""
    return _lib.sp_abi_version()


def version():
    """The library's version text."""
    return _lib.sp_version().decode()


def _spec(kwargs):
    spec = {}
    for key, value in kwargs.items():
        if value is None or value is False:
            continue
        if isinstance(value, tuple):
            value = list(value)
        spec[key] = value
    return json.dumps(spec)


class Context:
    """A library context: the parsed catalog, kept across calls.

    One thread at a time per context; give each thread its own (the
    module-level functions do). Use as a context manager or call close().
    """

    def __init__(self):
        self._ctx = _lib.sp_context_new()
        if not self._ctx:
            raise MemoryError("scaleplan: out of memory creating a context")

    def close(self):
        if self._ctx:
            _lib.sp_context_free(self._ctx)
            self._ctx = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def run_text(self, command, **kwargs):
        """Run a command; return its document as the text --json prints."""
        if not self._ctx:
            raise Error("scaleplan: the context is closed")
        out = ctypes.c_void_p()
        rc = _lib.sp_run(self._ctx, command.encode(), _spec(kwargs).encode(),
                         ctypes.byref(out))
        text = None
        if out.value:
            text = ctypes.string_at(out.value).decode()
            _lib.sp_free(out)
        if rc != _OK:
            message = _lib.sp_last_error(self._ctx).decode()
            document = json.loads(text) if text else None
            raise (InputError if rc == _INPUT else Error)(message, document)
        return text

    def run(self, command, **kwargs):
        """Run a command; return its document as a dict."""
        return json.loads(self.run_text(command, **kwargs))

    def step_time(self, **kw):
        """The step time in seconds ``sim`` gives, without a document: the
        fast path for loops (the same checks and messages as ``sim``)."""
        if not self._ctx:
            raise Error("scaleplan: the context is closed")
        out = ctypes.c_double()
        rc = _lib.sp_step_time(self._ctx, _spec(kw).encode(), ctypes.byref(out))
        if rc != _OK:
            message = _lib.sp_last_error(self._ctx).decode()
            raise (InputError if rc == _INPUT else Error)(message, None)
        return out.value

    def sim(self, **kw):
        """One training step simulated: ``scaleplan sim``."""
        return self.run("sim", **kw)

    def plan(self, **kw):
        """The scale ladder and a recommendation: ``scaleplan plan``."""
        return self.run("plan", **kw)

    def reliability(self, **kw):
        """A whole run with failures and checkpoints: ``scaleplan reliability``."""
        return self.run("reliability", **kw)

    def budget(self, **kw):
        """GPU-hours and cost: ``scaleplan budget``."""
        return self.run("budget", **kw)

    def validate(self, **kw):
        """Measured runs, logs or failure records against the model: ``scaleplan validate``."""
        return self.run("validate", **kw)

    def model(self, **kw):
        """Parameters, FLOPs and memory of a model: ``scaleplan model``."""
        return self.run("model", **kw)

    def cluster(self, **kw):
        """Many jobs replayed on one GPU pool: ``scaleplan cluster``."""
        return self.run("cluster", **kw)

    def power(self, **kw):
        """Power by phase, swing, a run's energy and cost: ``scaleplan power``."""
        return self.run("power", **kw)

    def catalog(self, *sections, **kw):
        """The built-in data: ``scaleplan catalog [SECTION...]``."""
        if sections:
            kw["args"] = list(sections)
        return self.run("catalog", **kw)

    def export(self, emit, **plan_kw):
        """The recommended layout as a framework's launch configuration
        (``plan --emit FORMAT``): returns the text of what would be written."""
        fd, path = tempfile.mkstemp(prefix="scaleplan-export-")
        os.close(fd)
        try:
            self.run("plan", emit=emit, out=path, **plan_kw)
            with open(path, encoding="utf-8") as f:
                return f.read()
        finally:
            os.unlink(path)


_local = threading.local()


def _context():
    ctx = getattr(_local, "ctx", None)
    if ctx is None:
        ctx = _local.ctx = Context()
    return ctx


def sim(**kw):
    """``scaleplan sim`` in this thread's context (see Context.sim)."""
    return _context().sim(**kw)


def step_time(**kw):
    """The step time in seconds of ``sim``, no document (see Context.step_time)."""
    return _context().step_time(**kw)


def plan(**kw):
    """``scaleplan plan`` in this thread's context (see Context.plan)."""
    return _context().plan(**kw)


def reliability(**kw):
    """``scaleplan reliability`` in this thread's context."""
    return _context().reliability(**kw)


def budget(**kw):
    """``scaleplan budget`` in this thread's context."""
    return _context().budget(**kw)


def validate(**kw):
    """``scaleplan validate`` in this thread's context."""
    return _context().validate(**kw)


def model(**kw):
    """``scaleplan model`` in this thread's context."""
    return _context().model(**kw)


def cluster(**kw):
    """``scaleplan cluster`` in this thread's context."""
    return _context().cluster(**kw)


def power(**kw):
    """``scaleplan power`` in this thread's context."""
    return _context().power(**kw)


def catalog(*sections, **kw):
    """``scaleplan catalog`` in this thread's context."""
    return _context().catalog(*sections, **kw)


def export(emit, **plan_kw):
    """``scaleplan plan --emit FORMAT`` in this thread's context: the file's text."""
    return _context().export(emit, **plan_kw)


_TABLES = ("ladder", "rows", "runs", "components", "checks", "fits", "gpus", "models")


def to_dataframe(result, key=None):
    """A result's table as a pandas DataFrame (pandas must be installed).

    key names the list of rows (``"ladder"`` for a plan); without it the
    first of the usual table keys the result has, or the whole document as
    one flattened row.
    """
    import pandas  # only this helper needs it

    if key is None:
        key = next((k for k in _TABLES if isinstance(result.get(k), list)), None)
    if key is None:
        return pandas.json_normalize(result)
    return pandas.json_normalize(result[key])

"""Shared by the Python apps of the ecosystem suite: steps run in order;
the first that raises prints "FAIL <step>: <error>" and exits 1."""
import os
import sys
import traceback

URL = os.environ["DATABASE_URL"]
APP = os.environ.get("APP_NAME", "")
_steps = []


def step(fn):
    _steps.append(fn)
    return fn


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def _sqlstate(e):
    return getattr(e, "sqlstate", None) or getattr(e, "pgcode", None)


def _text(e):
    return f"{type(e).__name__}: " + " ".join(str(e).split())


def first_error(e):
    """The error that stopped the app, named as the server gave it: the
    driver's error under SQLAlchemy's wrapper; and when that one is the
    client's own (no SQLSTATE), raised while handling a server error (as
    psycopg's "rollback() forbidden" after a failed SAVEPOINT), that server
    error first."""
    err = getattr(e, "orig", None) or e
    if _sqlstate(err):
        return _text(err)
    seen, x = set(), err.__cause__ or err.__context__
    while x is not None and id(x) not in seen:
        seen.add(id(x))
        if _sqlstate(x):
            return _text(x) + " (then " + _text(err) + ")"
        x = x.__cause__ or x.__context__
    return _text(err)


def main():
    for fn in _steps:
        try:
            fn()
        except BaseException as e:  # noqa: BLE001 - report whatever stopped the app
            traceback.print_exc()
            print(f"FAIL {fn.__name__}: {first_error(e)}", flush=True)
            sys.exit(1)
        print("ok", fn.__name__, flush=True)

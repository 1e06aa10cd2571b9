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


def main():
    for fn in _steps:
        try:
            fn()
        except BaseException as e:  # noqa: BLE001 - report whatever stopped the app
            traceback.print_exc()
            # SQLAlchemy wraps the driver's error; name the driver's.
            err = getattr(e, "orig", None) or e
            msg = " ".join(str(err).split())
            print(f"FAIL {fn.__name__}: {type(err).__name__}: {msg}", flush=True)
            sys.exit(1)
        print("ok", fn.__name__, flush=True)

"""Installed on PYTHONPATH by ``oomtriage run`` for commands that are not a plain ``python SCRIPT``:
sets up oomtriage in every Python process the command starts, then runs any other sitecustomize."""

import os
import sys

if os.environ.get("OOMTRIAGE_HOOK") == "1":
    try:
        from oomtriage._child import setup_from_env

        setup_from_env()
    except Exception as error:  # never stop the user's program from starting
        sys.stderr.write(f"oomtriage: hook not installed ({type(error).__name__}: {error})\n")


def _chain_next_sitecustomize() -> None:
    from importlib.machinery import PathFinder

    here = os.path.dirname(os.path.abspath(__file__))
    spec = PathFinder.find_spec("sitecustomize", [p for p in sys.path if os.path.abspath(p or ".") != here])
    if spec is not None and spec.loader is not None and spec.origin != os.path.abspath(__file__):
        module = type(sys)("sitecustomize")
        module.__file__ = spec.origin
        spec.loader.exec_module(module)


_chain_next_sitecustomize()

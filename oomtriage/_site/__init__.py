"""Holds ``sitecustomize.py``, which ``oomtriage run`` puts on PYTHONPATH for commands that start
Python themselves (torchrun, accelerate launch, shell scripts)."""

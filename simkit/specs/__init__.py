"""Run specs: one frozen, validated dataclass per run kind (:mod:`simkit.specs.base`), its
defaults declared once, its identity what the run's folder stores and resumes by.

The library's run functions take a spec (and an :class:`~simkit.specs.base.Execution`: how to
run it, which never changes the result); the command line and experiment files build one.
"""

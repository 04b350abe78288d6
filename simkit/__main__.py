"""``python -m simkit`` runs the command line."""

from simkit.cli import console_main

console_main()

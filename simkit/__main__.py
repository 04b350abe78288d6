"""``python -m simkit`` runs the command line."""

from simkit.cli import main

raise SystemExit(main())

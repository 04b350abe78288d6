"""Exception and warning types of simkit.  Every user-facing error is one clear line.

:func:`loads_json` is ``json.loads`` for text from a file or a user: JSON nested deeper than
:data:`MAX_JSON_DEPTH` (``[[[[...``, a ``RecursionError`` in :mod:`json` or later in whatever
walks the value) or a number Python will not convert becomes the ``json.JSONDecodeError``
that each reader already turns into its one-line error.
"""

from __future__ import annotations

import json
from typing import Any


class SimkitError(ValueError):
    """Base class of simkit's input errors.

    Library code names a bad argument by its Python parameter name (``deals must be >= 1, got
    0``); ``parameters`` lists the parameter names a message mentions, so that a front end can
    say them its own way (the command line writes ``--deals``).

    >>> error = SimkitError("deals must be >= 1, got 0", parameters=("deals",))
    >>> str(error), error.parameters
    ('deals must be >= 1, got 0', ('deals',))
    """

    def __init__(self, *args: object, parameters: tuple[str, ...] = ()) -> None:
        super().__init__(*args)
        self.parameters = tuple(parameters)


class CardError(SimkitError):
    """An unknown card, a malformed card token or more copies of a type than exist."""


class GroupError(SimkitError):
    """A malformed exposed group (a chow that is no 圆, a table card that is no 将, ...)."""


class RuleError(SimkitError):
    """An unknown rule option or a bad option value."""


class DegenerateDataWarning(RuntimeWarning):
    """The data cannot give the statistic asked for (as ``scipy.stats.DegenerateDataWarning``):
    e.g. a bootstrap interval of constant data, returned as NaN."""


class ModelRulesWarning(UserWarning):
    """A ``learned`` model played under other rules than it was trained for (it plays them,
    but it learned from deals of its own rules)."""


SIMKIT_WARNINGS = (DegenerateDataWarning, ModelRulesWarning)  # simkit's own warning classes


MAX_JSON_DEPTH = 64  # deeper JSON is no file simkit reads (its own nest a few levels)


def loads_json(text: str | bytes) -> Any:
    """``json.loads(text)``, with JSON nested deeper than :data:`MAX_JSON_DEPTH` ("nested too
    deeply") or holding a number Python refuses (an integer of over 4300 digits) raised as a
    :class:`json.JSONDecodeError`, never a ``RecursionError`` or another ``ValueError``.

    >>> loads_json('{"a": [1, 2]}')
    {'a': [1, 2]}
    >>> loads_json("[" * 100_000)
    Traceback (most recent call last):
    ...
    json.decoder.JSONDecodeError: nested too deeply: line 1 column 1 (char 0)
    """
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        raise
    except RecursionError:
        raise _json_error("nested too deeply", text) from None
    except ValueError as exc:  # a huge integer, bytes that are not UTF-8
        raise _json_error(" ".join(str(exc).split())[:120], text) from None
    if _deeper_than(value, MAX_JSON_DEPTH):
        raise _json_error("nested too deeply", text)
    return value


def _json_error(message: str, text: str | bytes) -> json.JSONDecodeError:
    doc = text if isinstance(text, str) else text.decode("utf-8", "replace")
    return json.JSONDecodeError(message, doc, 0)


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether the JSON value nests lists and objects more than ``limit`` deep (walked without
    recursion)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False

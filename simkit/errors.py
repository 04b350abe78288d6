"""Exception and warning types of simkit.  Every user-facing error is one clear line."""


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

"""Exception types of simkit.  Every user-facing error is one clear line."""


class SimkitError(ValueError):
    """Base class of simkit's input errors."""


class CardError(SimkitError):
    """An unknown card, a malformed card token or more copies of a type than exist."""


class GroupError(SimkitError):
    """A malformed exposed group (a chow that is no 圆, a table card that is no 将, ...)."""


class RuleError(SimkitError):
    """An unknown rule option or a bad option value."""

"""Bot policies: built-in numba policies and the plug-in registry."""

from simkit.policies.registry import (
    PolicyError,
    PolicySpec,
    parse_policies,
    parse_policy,
    policy_names,
    register_policy,
    unregister_policy,
)

__all__ = [
    "PolicyError",
    "PolicySpec",
    "parse_policies",
    "parse_policy",
    "policy_names",
    "register_policy",
    "unregister_policy",
]

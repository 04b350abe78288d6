"""Bot policies: built-in numba policies and the plug-in registry."""

from simkit.policies.registry import (
    Param,
    PolicyError,
    PolicySpec,
    builtin_names,
    param_names,
    param_table_of,
    params_by_name,
    parse_policies,
    parse_policy,
    parse_policy_list,
    policy_label,
    policy_names,
    register_policy,
    unregister_policy,
)

__all__ = [
    "Param",
    "PolicyError",
    "PolicySpec",
    "builtin_names",
    "param_names",
    "param_table_of",
    "params_by_name",
    "parse_policies",
    "parse_policy",
    "parse_policy_list",
    "policy_label",
    "policy_names",
    "register_policy",
    "unregister_policy",
]

"""simkit: Monte Carlo simulation and statistics for 四色牌 (Sì Sè Pái), Guangshui/Yingshan rules."""

from simkit.kernel_cache import guard_package as _guard_package

__version__ = "0.1.0"

# before any kernel module is imported: the kernels are cached under the digest of these sources
# (simkit/kernel_cache.py), so a kernel built from other sources can never be loaded
_guard_package(__name__, __path__[0])

"""simkit: Monte Carlo simulation and statistics for 四色牌 (Sì Sè Pái), Guangshui/Yingshan rules."""

from simkit.kernel_cache import clear_stale_kernel_caches as _clear_stale_kernel_caches

__version__ = "0.1.0"

_clear_stale_kernel_caches()  # before any kernel is loaded: numba would load kernels built from older sources

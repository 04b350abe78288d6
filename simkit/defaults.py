"""The defaults of the analysis and review settings, in one numba-free module: the library
functions (:mod:`simkit.studies.analyze`, :mod:`simkit.studies.review`,
:mod:`simkit.studies.reference`) and the command line (:mod:`simkit.cliargs`, which must not
import numba to print its help) read them here, so a default changed once changes everywhere.

>>> DEFAULT_ROLLOUTS > DEFAULT_REVIEW_ROLLOUTS >= DEFAULT_BATCH
True
"""

from __future__ import annotations

DEFAULT_POLICY = "expert"  # the rollout policy at every seat
DEFAULT_COMPARE_DEALS = 10_000  # compare: deals of a fixed-size comparison
DEFAULT_SPRT_MAX_DEALS = 1_000_000  # compare --sprt: the sequential test's cap when --deals is not given
# luck-model (simkit.learn.value.train_value_model and its command): the shipped value model's
# settings (simkit/runner/models/value.npz records them: 6,000 deals a pair, 2,000 check deals)
DEFAULT_LUCK_MODEL_DEALS = 6_000
DEFAULT_LUCK_MODEL_CHECK_DEALS = 2_000
DEFAULT_ROLLOUTS = 16384  # analyze: determinisations per action at most
DEFAULT_TOLERANCE = 0.05  # 牌: an action whose difference to the best is surely within this stops as equal
DEFAULT_BATCH = 64  # determinisations per racing round
# the opponent model's default: 20 hill-climbing steps per sampled opponent hand.  Uniform samples
# (0) overestimate the player's payoff by 0.96 ± 0.10 牌 against what expert deals then paid
# (calibration on seed 4105, 150 deals); 20 steps: +0.01 ± 0.09 there, +0.10 ± 0.08 on seed 4106
# (docs/analysis.md, "Opponent model")
DEFAULT_SHARPEN = 20
DEFAULT_REVIEW_ROLLOUTS = 512  # review: determinisations per action at most, per decision
DEFAULT_REFERENCE = "expert"  # the policy a review's loss against a reference is measured against
DEFAULT_SAMPLES = 64  # stock orders per decision of the loss against a reference
# calibrate (simkit.specs.calibrate.CalibrateSpec and its command): the seat the policy plays and the
# deals played both ways
DEFAULT_CALIBRATE_SEAT = 1
DEFAULT_CALIBRATE_DEALS = 100
DEFAULT_HINT_ROLLOUTS = 1024  # simkit play: determinisations per action of a hint at most (a second or two)
DEFAULT_BOTS = ("expert", "expert")  # simkit play: the two bots at the table
# deals before the sequential test (compare --sprt, tournament --sprt) may decide.  On 5,000
# greedy − patient differences with three heavy deals (+34.5, +30, +28 牌) a burn-in of 200 let
# β reach 0.056 ± 0.002 (seed 5151, 20,000 sequences; an audit saw 0.060–0.066 on another seed);
# 300 keeps α, β ≤ 0.055 there and on the plain differences (docs/methods.md, "The burn-in
# under heavy tails").  At a small effect a fixed burn-in comes early in a long test and β rose to
# 0.077-0.133 on that sample at δ = 0.1 (issue 50); the default burn-in is therefore
# max(DEFAULT_BURN_IN, ⌈BURN_IN_INFORMATION / δ²⌉) deals (900 at δ = 0.1, 300 from δ ≈ 0.173 up),
# which keeps α, β ≤ 1.1 × nominal at δ = 0.1 and 0.2 for (α, β) = (0.05, 0.05) and (0.05, 0.10)
# (simkit.analysis.sequential.default_burn_in; docs/methods.md, "Small effects")
DEFAULT_BURN_IN = 300
BURN_IN_INFORMATION = 9.0  # 牌²: n δ² at the first look of a small-effect test
DEFAULT_BELIEF_NOISE = 0.1  # the belief's chance that a seat plays any legal action instead of its policy's
DEFAULT_BELIEF = 256  # analyze --belief: draws of the hidden cards given the table's play (Metropolis particles)
# compare --variance-reduction: the adjusted estimate beside plain duplicate's.  The default is
# plain duplicate ("none"), the most efficient per CPU-second of the methods measured: the
# cross-fitted regression on the dealt hands is unbiased but removed almost no variance (1.000x
# expert - greedy, 1.008x expert - patient on 20,000 deals of seeds 391001, 391002) at 1.14x the
# CPU (efficiency 0.88), the network luck model 0.25 (docs/measurements.md, "Regression adjustment")
VARIANCE_REDUCTION_METHODS = ("none", "regression", "luck")
DEFAULT_VARIANCE_REDUCTION = "none"
# compare --design: which deals the six seatings play.  "six": every deal under all six (what the
# luck and regression adjustments adjust, and what a tournament plays); "pairs": each
# complementary pair of seatings (ABB+BAA, BAB+ABA, BBA+AAB) on deals of its own seed, unbiased
# for the same difference at the same CPU per row (by construction), so its gain is the variance
# ratio, variance per row of six / of pairs.  A deal's three pairs are positively correlated, so
# it was 1.15x [1.13, 1.18] (expert - greedy) and 1.14x [1.12, 1.15] (expert - patient) on the same
# deals (100,000 deals of seeds 5205001, 5205002, experiments/seating_designs.py), 1.17x-1.56x for
# three other pairs, and is measured on separate runs of each design in docs/measurements.md "Designs
# of the deals: measurements" (experiments/compare_efficiency.py).  It stays opt-in: only "six" gives the
# adjusted estimates and measures an adjustment's efficiency against plain duplicate on the same deals
DUPLICATE_DESIGNS = ("six", "pairs")
DEFAULT_DUPLICATE_DESIGN = "six"
# the widest hidden layer of every model kind's network (simkit.policies.network.MAX_WIDTH: the
# kernels' scratch holds this many values per layer): `simkit train --hidden H1,H2`, `simkit
# luck-model --hidden H` and the library's training functions refuse a wider one before any work,
# and a model file declaring one is refused at load (docs/models.md, "Limits of a model file")
MAX_HIDDEN_WIDTH = 256

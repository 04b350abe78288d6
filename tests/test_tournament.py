"""Tournaments: the Bradley–Terry fit against an independent maximum-likelihood fit, the
bootstrap's joint resampling, and a small round robin end to end (crosstable, resume, refusal)."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from scipy.optimize import minimize

from simkit.studies.compare import compare
from simkit.analysis.ratings import ELO_SCALE, bootstrap_ratings, bradley_terry, deal_outcomes, points_matrix
from simkit.studies.tournament import TOURNAMENT_FILE, pairing_dir, run_tournament, write_tournament_report
from simkit.storage.dataset import DatasetError
from simkit.specs.base import Execution
from simkit.specs.compare import CompareSpec
from simkit.specs.tournament import TournamentSpec


def _mle_by_scipy(points: np.ndarray) -> np.ndarray:
    """Bradley–Terry log-likelihood maximised by a general optimiser (no MM update)."""
    k = points.shape[0]

    def negative_log_likelihood(theta_free):
        theta = np.concatenate([[0.0], theta_free])
        diff = theta[:, None] - theta[None, :]
        return -np.sum(points * (-np.logaddexp(0.0, -diff)))

    fit = minimize(negative_log_likelihood, np.zeros(k - 1), method="BFGS", options={"gtol": 1e-10})
    theta = np.concatenate([[0.0], fit.x])
    rating = ELO_SCALE * theta / np.log(10.0)
    return rating - rating.mean()


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_bradley_terry_matches_a_general_maximum_likelihood_fit(seed):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(3, 7))
    points = rng.integers(1, 60, size=(k, k)).astype(float) + rng.integers(0, 2, size=(k, k)) * 0.5
    np.fill_diagonal(points, 0.0)
    ours = bradley_terry(points, prior_draws=0.0)
    assert np.allclose(ours, _mle_by_scipy(points), atol=1e-3)


def test_two_policies_rate_apart_by_the_log_odds():
    r = bradley_terry(np.array([[0.0, 30.0], [10.0, 0.0]]), prior_draws=0.0)
    assert r[0] - r[1] == pytest.approx(400 * np.log10(3.0))


def test_the_prior_keeps_a_clean_sweep_finite_and_the_order_right():
    points = np.array([[0.0, 50.0, 50.0], [0.0, 0.0, 30.0], [0.0, 20.0, 0.0]])
    with pytest.raises(ValueError, match="no point"):
        bradley_terry(points.T.copy(), prior_draws=0.0)
    r = bradley_terry(points, prior_draws=1.0)
    assert np.isfinite(r).all() and r[0] > r[1] > r[2]
    # one virtual draw per pairing: 50.5 of 51 against each -> about 400*log10(101) above an equal
    assert 600 < r[0] - r[1] < 1200


def test_each_virtual_draw_is_half_a_point_to_each_side():
    """prior_draws virtual draws per pairing: 9 - 1 with one draw is 9.5 - 1.5 (log-odds worked
    by hand), with two draws 10 - 2; a pair that never played gets none."""
    one = bradley_terry(np.array([[0.0, 9.0], [1.0, 0.0]]), prior_draws=1.0)
    assert one[0] - one[1] == pytest.approx(400 * np.log10(9.5 / 1.5))
    two = bradley_terry(np.array([[0.0, 9.0], [1.0, 0.0]]), prior_draws=2.0)
    assert two[0] - two[1] == pytest.approx(400 * np.log10(10.0 / 2.0))
    chain = np.array([[0.0, 6.0, 0.0], [2.0, 0.0, 3.0], [0.0, 1.0, 0.0]])  # 0 and 2 never met
    with_draws = chain + 0.5 * (chain + chain.T > 0)
    assert np.allclose(bradley_terry(chain, prior_draws=1.0), _mle_by_scipy(with_draws), atol=1e-3)


def test_disconnected_pairings_are_refused():
    points = np.zeros((4, 4))
    points[0, 1] = points[1, 0] = 5.0
    points[2, 3] = points[3, 2] = 5.0
    with pytest.raises(ValueError, match="connect"):
        bradley_terry(points)


def test_outcomes_and_points():
    assert deal_outcomes(np.array([0.25, 0.0, -1.0, 3.0])).tolist() == [1.0, 0.5, 0.0, 1.0]
    points, games = points_matrix(3, {(0, 1): np.array([1.0, 0.5, 0.0]), (1, 2): np.array([1.0, 1.0])})
    assert points[0, 1] == 1.5 and points[1, 0] == 1.5 and points[1, 2] == 2.0 and points[2, 1] == 0.0
    assert np.array_equal(points + points.T, games)
    with pytest.raises(ValueError):
        points_matrix(3, {(1, 0): np.array([1.0])})


def test_bootstrap_resamples_the_shared_deals_jointly():
    """Pairings (0, 1) and (0, 2) with identical outcomes: resampled with the same deal indices,
    policies 1 and 2 get the same rating in every resample (independent resampling would not)."""
    rng = np.random.default_rng(5)
    o = (rng.random(200) < 0.7).astype(float)
    outcomes = {(0, 1): o, (0, 2): o.copy(), (1, 2): np.full(200, 0.5)}
    draws = bootstrap_ratings(3, outcomes, resamples=200, seed=1)
    assert np.allclose(draws[:, 1], draws[:, 2])
    assert draws[:, 0].std() > 1.0  # it does resample
    # pairings of different lengths (stopped early) are resampled each on its own
    uneven = {(0, 1): o, (0, 2): o[:150].copy(), (1, 2): np.full(200, 0.5)}
    assert not np.allclose(bootstrap_ratings(3, uneven, resamples=50, seed=1)[:, 1],
                           bootstrap_ratings(3, uneven, resamples=50, seed=1)[:, 2])


POLICIES = ["greedy", "random", "patient"]


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    out = tmp_path_factory.mktemp("tournament")
    result = run_tournament(TournamentSpec(POLICIES, deals=60, seed=4, batch_size=30, resamples=100), out,
                            Execution(quiet=True))
    return out, result


def test_tournament_ladder_and_crosstable(played, tmp_path):
    out, result = played
    ladder = result.ladder()
    assert ladder["policy"].iloc[-1] == "random"
    assert ladder.loc[ladder["policy"] == "random", "rating"].item() == 0.0  # the anchor
    assert (ladder["lo"] <= ladder["rating"] + 1e-9).all() and (ladder["rating"] <= ladder["hi"] + 1e-9).all()
    assert ladder.loc[ladder["policy"] == "random", "payoff"].item() == 0.0
    assert (ladder["payoff"].diff().dropna() <= 0).all()  # best payoff rating first
    gaps = result.gaps()
    assert len(gaps) == 3 and (gaps["payoff_lo"] <= gaps["payoff_gap"]).all() and (gaps["payoff_gap"] <= gaps["payoff_hi"]).all()
    assert (gaps["payoff_gap"] >= 0).all()
    est = result.crosstable()
    assert np.isnan(np.diag(est.to_numpy())).all()
    assert np.allclose(est.to_numpy(), -est.to_numpy().T, equal_nan=True)
    lo, hi = result.crosstable("lo"), result.crosstable("hi")
    assert np.allclose(lo.to_numpy(), -hi.to_numpy().T, equal_nan=True)
    # a pairing is the duplicate comparison of the pair: the same figure as compare() on its own
    alone = compare(CompareSpec("greedy", "patient", deals=60, seed=4, batch_size=30), tmp_path / "alone",
                    Execution(quiet=True))
    assert est.loc["greedy", "patient"] == pytest.approx(alone.test.mean)  # plain labels: defaults not shown
    assert result.pairings[(0, 2)].per_seating.shape == (60, 6)
    report = write_tournament_report(result, out)
    text = report.read_text()
    assert "0 (anchor)" in text and "| patient |" in text and "patient:2,6,1" not in text
    assert (out / "tournament_ratings.png").exists() and (out / "tournament_crosstable.png").exists()
    assert (out / "gaps.csv").exists() and "Davidson" in text and "payoff rating" in text
    pairwise = result.pairwise()
    assert len(pairwise) == 3 and (pairwise["difference"] >= 0).all()
    assert ((pairwise["simultaneous_lo"] <= pairwise["lo"]) & (pairwise["hi"] <= pairwise["simultaneous_hi"])).all()
    assert (pairwise["p_holm"] >= pairwise["p_value"]).all()
    direct = pairwise.set_index(["better", "worse"])["difference"]
    assert direct[("greedy", "random")] == pytest.approx(est.loc["greedy", "random"])
    fit = result.fit()
    assert fit.df == 1 and f"χ² = {fit.chi2:.2f} on 1 degrees of freedom" in text and "Holm" in text
    assert fit.reference == "F" and "every pairing on the same 60 deals" in text
    assert (out / "pairwise.csv").exists()


def test_the_console_warns_and_shows_every_pairing_with_holm_when_the_ladder_misleads(played, tmp_path, monkeypatch,
                                                                                      capsys):
    """``simkit tournament`` on a table that is not additive (the played one with random -
    patient turned around: random now beats patient, greedy beats both): under the ladder the
    console prints the warning and every pairing's direct difference with its Holm-adjusted
    p-value (statsmodels' Holm over scipy's t tests), within 100 columns; on an additive table
    (random - patient made greedy - patient minus greedy - random plus noise) one line of fit
    and no warning."""
    import dataclasses

    from scipy import stats
    from statsmodels.stats.multitest import multipletests

    from simkit import cli
    from simkit.analysis.report import format_p
    from simkit.studies import tournament

    out, result = played
    pairings = dict(result.pairings)
    noise = np.random.default_rng(3).normal(0.0, 1.0, pairings[(1, 2)].per_seating.shape)
    additive = dataclasses.replace(result, pairings={**pairings, (1, 2): dataclasses.replace(
        pairings[(1, 2)], per_seating=pairings[(0, 2)].per_seating - pairings[(0, 1)].per_seating + noise)})
    assert additive.fit().fits and additive.fit().df == 1
    good = tournament.console_lines(additive)
    assert len(good) == 1 and good[0].startswith("additive fit: χ²") and "WARNING" not in good[0]
    pairings[(1, 2)] = dataclasses.replace(pairings[(1, 2)], per_seating=-pairings[(1, 2)].per_seating)
    intransitive = dataclasses.replace(result, pairings=pairings)
    monkeypatch.setattr(tournament, "run_tournament", lambda *args, **kwargs: intransitive)
    monkeypatch.setattr(cli, "_compile_first", lambda *args, **kwargs: None)
    assert cli.main(["tournament", *POLICIES, "--deals", "60", "--seed", "4", "--out", str(tmp_path / "t")]) == 0
    printed = capsys.readouterr().out.splitlines()
    warning = next(n for n, line in enumerate(printed) if line.startswith("WARNING: the ladder misleads"))
    assert printed[warning - 1].lstrip().startswith("3. ")  # beside the ladder, under its last row
    assert all(len(line) <= 100 for line in printed[warning:-1])
    pairs = sorted(pairings)
    differences = [pairings[p].per_seating.mean(axis=1) for p in pairs]
    holm = multipletests([stats.ttest_1samp(d, 0.0).pvalue for d in differences], method="holm")[1]
    for (i, j), d, h in zip(pairs, differences, holm):
        better, worse = (POLICIES[i], POLICIES[j]) if d.mean() >= 0 else (POLICIES[j], POLICIES[i])
        line = next(line for line in printed[warning:] if line.strip().startswith(f"{better} - {worse} "))
        assert line.split()[3] == f"{abs(d.mean()):+.3f}" and line.split()[-2] == format_p(h), line


def test_tournament_resumes_and_refuses_another(played):
    out, result = played
    files = {p: p.stat().st_mtime_ns for p in pairing_dir(out, 0, 1).rglob("*.parquet")}
    again = run_tournament(TournamentSpec(POLICIES, deals=60, seed=4, batch_size=30, resamples=100), out,
                           Execution(quiet=True))
    assert {p: p.stat().st_mtime_ns for p in pairing_dir(out, 0, 1).rglob("*.parquet")} == files  # nothing replayed
    assert np.array_equal(again.ratings, result.ratings)
    assert json.loads((out / TOURNAMENT_FILE).read_text())["policies"] == ["greedy", "random", "patient:2,6,1"]
    with pytest.raises(DatasetError, match="another tournament.*deals"):
        run_tournament(TournamentSpec(POLICIES, deals=80, seed=4, batch_size=30, resamples=100), out,
                       Execution(quiet=True))


PATIENT_BY_NAME = {"min_units": 2.0, "late_stock": 6.0, "peng_slack": 1.0}


def test_identity_files_record_parameters_by_name(played):
    """tournament.json and each pairing's comparison.json name every parameter (as dataset
    manifests do), next to the positional texts that identify the run."""
    out, _ = played
    tournament = json.loads((out / TOURNAMENT_FILE).read_text())
    assert tournament["policy_params"] == [{}, {}, PATIENT_BY_NAME]
    comparison = json.loads((pairing_dir(out, 0, 2) / "comparison.json").read_text())
    assert comparison["policy_a"] == "greedy" and comparison["policy_b"] == "patient:2,6,1"
    assert comparison["policy_a_params"] == {} and comparison["policy_b_params"] == PATIENT_BY_NAME


def test_identity_files_written_before_named_parameters_still_resume(played, tmp_path):
    """Files without the by-name parameters (written before them) resume as they are: the
    parameters by name are a record, not part of what a resume compares."""
    import shutil

    from simkit.storage.files import read_checked_json, write_checked_json

    out = tmp_path / "old"
    shutil.copytree(played[0], out)
    old = {}
    for path, keys in [(out / TOURNAMENT_FILE, ["policy_params"]),
                       (pairing_dir(out, 0, 2) / "comparison.json", ["policy_a_params", "policy_b_params"])]:
        data = read_checked_json(path, "identity")
        write_checked_json(path, {k: v for k, v in data.items() if k not in keys})
        old[path] = path.read_bytes()
    again = run_tournament(TournamentSpec(POLICIES, deals=60, seed=4, batch_size=30, resamples=100), out,
                           Execution(quiet=True))
    assert np.array_equal(again.ratings, played[1].ratings)
    assert {path: path.read_bytes() for path in old} == old  # read, not rewritten


def test_tournament_cli_refuses_repeated_policies(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "simkit", "tournament", "greedy", "greedy", "--out", str(tmp_path / "t")],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "must differ" in proc.stderr
    assert "--policies" not in proc.stderr  # the policies are the command's arguments, not a flag
    assert not (tmp_path / "t").exists()


def test_experiment_tournament_section(tmp_path):
    from simkit.experiment.run import run_experiment
    from simkit.experiment.spec import ExperimentError, parse_experiment

    with pytest.raises(ExperimentError, match="tournament: 'policies' must list 2 or more"):
        parse_experiment('name = "x"\n[tournament]\npolicies = ["greedy"]\ndeals = 10\n')
    with pytest.raises(ExperimentError, match="tournament: unknown policy|tournament:.*nosuch"):
        parse_experiment('name = "x"\n[tournament]\npolicies = ["greedy", "nosuch"]\ndeals = 10\n')
    path = tmp_path / "t.toml"
    path.write_text('name = "t"\nseed = 2\nbatch_size = 20\n[tournament]\npolicies = ["greedy", "random"]\ndeals = 20\n')
    report = run_experiment(path, reports=tmp_path / "reports", data=tmp_path / "data", execution=Execution(quiet=True))
    text = report.read_text()
    assert "## Tournament" in text and "0 (anchor)" in text
    assert (tmp_path / "data" / "tournament" / "pair-0-1" / "seating-ABB").is_dir()


# ---- ratings on the payoff scale and Davidson's ties


def _additive_pairings(truth: np.ndarray, deals: int, rng: np.random.Generator, noise: float = 1.0) -> dict:
    """Per-deal differences of every pair i < j: truth_i - truth_j + a shared deal effect of each
    policy (so the pairings are correlated through the cards, as in a tournament) + noise."""
    k = truth.size
    deal_effect = rng.normal(0.0, noise, size=(deals, k))
    return {(i, j): truth[i] - truth[j] + deal_effect[:, i] - deal_effect[:, j] + rng.normal(0, noise, deals)
            for i in range(k) for j in range(i + 1, k)}


def test_payoff_ratings_reproduce_an_additive_truth():
    from simkit.analysis.ratings import bootstrap_payoff_ratings, payoff_ratings

    truth = np.array([0.5, 0.2, 0.0, -0.45])
    exact = {(i, j): np.full(10, truth[i] - truth[j]) + np.array([0.1, -0.1] * 5) for i in range(4) for j in range(i + 1, 4)}
    assert np.allclose(payoff_ratings(4, exact), truth - truth.mean(), atol=1e-12)
    # one pairing missing: the others still fix every rating (a connected design)
    del exact[(0, 3)]
    assert np.allclose(payoff_ratings(4, exact), truth - truth.mean(), atol=1e-12)
    # noisy, correlated pairings: the joint bootstrap's gap intervals cover the true gaps ~95 %
    rng = np.random.default_rng(12)
    covered = trials = 0
    for _ in range(150):
        data = _additive_pairings(truth, 400, rng)
        estimate = payoff_ratings(4, data)
        draws = bootstrap_payoff_ratings(4, data, resamples=300, seed=int(rng.integers(1 << 30)))
        for i, j in ((0, 1), (1, 2), (2, 3)):  # neighbours
            gap = draws[:, i] - draws[:, j]
            lo, hi = np.quantile(gap, [0.025, 0.975])
            covered += lo <= truth[i] - truth[j] <= hi
            trials += 1
        assert abs((estimate[0] - estimate[3]) - 0.95) < 0.5
    assert 0.91 <= covered / trials <= 0.985, covered / trials


def test_davidson_matches_a_direct_fit_and_counts_ties_as_ties():
    from simkit.analysis.ratings import davidson, outcome_counts

    rng = np.random.default_rng(4)
    wins = rng.integers(5, 60, size=(4, 4)).astype(float)
    np.fill_diagonal(wins, 0.0)
    ties = np.triu(rng.integers(0, 40, size=(4, 4)).astype(float), 1)
    ties = ties + ties.T
    ours, nu = davidson(wins, ties, prior_ties=0.0)

    def nll(theta):  # the Davidson likelihood written out pair by pair, another parametrisation
        gamma = np.exp(np.concatenate([[0.0], theta[:3]]))
        v = np.exp(theta[3])
        total = 0.0
        for i in range(4):
            for j in range(i + 1, 4):
                d = gamma[i] + gamma[j] + v * np.sqrt(gamma[i] * gamma[j])
                total += wins[i, j] * np.log(gamma[i] / d) + wins[j, i] * np.log(gamma[j] / d)
                total += ties[i, j] * np.log(v * np.sqrt(gamma[i] * gamma[j]) / d)
        return -total

    fit = minimize(nll, np.zeros(4), method="Nelder-Mead", options={"xatol": 1e-10, "fatol": 1e-12, "maxiter": 20000})
    direct = ELO_SCALE * np.concatenate([[0.0], fit.x[:3]]) / np.log(10.0)
    assert np.allclose(ours, direct - direct.mean(), atol=0.05)
    assert nu == pytest.approx(np.exp(fit.x[3]), rel=1e-3)
    # a policy that is never ahead but often level is rated on its ties, not as half-wins
    d = {(0, 1): np.array([1.0] * 30 + [0.0] * 70)}
    w, t = outcome_counts(2, d)
    assert (w[0, 1], w[1, 0], t[0, 1]) == (30.0, 0.0, 70.0)
    ratings, nu = davidson(w, t, prior_ties=0.0)
    points = bradley_terry(np.array([[0.0, 65.0], [35.0, 0.0]]), prior_draws=0.0)  # ties as half-wins
    assert ratings[0] - ratings[1] > points[0] - points[1]


def test_each_virtual_tie_is_a_tie_in_the_davidson_fit():
    """Two policies have a closed form (P(ahead) = wins / n, P(level) = ties / n): ν = ties /
    √(wins_ij · wins_ji).  The default prior adds one tie per pairing (60 - 20 with 10 level deals
    reads as 11 level), two ties with prior_ties=2; the ratings' gap stays 400 log10(3)."""
    from simkit.analysis.ratings import davidson

    wins = np.array([[0.0, 60.0], [20.0, 0.0]])
    ties = np.array([[0.0, 10.0], [10.0, 0.0]])
    for prior, level in ((None, 11.0), (2.0, 12.0), (0.0, 10.0)):
        ratings, nu = davidson(wins, ties) if prior is None else davidson(wins, ties, prior_ties=prior)
        assert nu == pytest.approx(level / np.sqrt(1200.0), rel=1e-5)
        assert ratings[0] - ratings[1] == pytest.approx(400 * np.log10(3.0), abs=0.01)


def test_holm_adjusted_p_values_match_statsmodels():
    from statsmodels.stats.multitest import multipletests

    from simkit.analysis.ratings import holm_adjusted

    generator = np.random.default_rng(39)
    for m in (1, 3, 6, 10):
        p = generator.uniform(0, 0.2, size=m)
        assert np.allclose(holm_adjusted(p), multipletests(p, method="holm")[1])


def _null_tournament(generator: np.random.Generator, deals: int) -> dict:
    """Four policies whose pairings are additive in expectation (strengths 0, 1.8, 1.5, 2.3),
    correlated as a real tournament's are: each deal moves every policy's payoff by its own
    scale (3 for the first, a random-like policy that loses big on some deals, 0.8 to 1.2 for
    the others) times a shared deal effect plus its own, so pairings against the same policy
    correlate up to about 0.9 (greedy/patient/expert - random measured 0.91 on 3,000 deals);
    each pairing adds its own noise.  All heavy-tailed (Student t, 5 df)."""
    truth = np.array([0.0, 1.8, 1.5, 2.3])
    scale = np.array([3.0, 1.0, 1.2, 0.8])
    payoff = scale * (generator.standard_t(5, size=(deals, 1)) + generator.standard_t(5, size=(deals, 4)))
    return {(i, j): truth[i] - truth[j] + payoff[:, i] - payoff[:, j] + 0.6 * generator.standard_t(5, deals)
            for i in range(4) for j in range(i + 1, 4)}


def _diagonal_chi2_p(differences: dict) -> float:
    """The former fit test: inverse-variance weighted residuals, the pairings taken as independent."""
    from scipy import stats

    pairs = sorted(differences)
    design = np.zeros((len(pairs), 4))
    for row, (i, j) in enumerate(pairs):
        design[row, i], design[row, j] = 1.0, -1.0
    means = np.array([differences[p].mean() for p in pairs])
    root = np.sqrt([differences[p].size / differences[p].var(ddof=1) for p in pairs])
    ratings = np.linalg.lstsq(design * root[:, None], means * root, rcond=None)[0]
    return float(stats.chi2.sf(np.sum((root * (means - design @ ratings)) ** 2), len(pairs) - 3))


def test_the_additive_fit_is_generalised_least_squares_on_the_shared_deals_and_flags_an_intransitive_table():
    """χ² is the generalised least-squares residual of the pairings' means about the best additive
    ratings, with the means' covariance from the per-deal rows (statsmodels' GLS, another
    formulation than the code's cycle contrasts), on pairs - (k - 1) degrees of freedom;
    a rock-paper-scissors table does not fit, and two policies that play alike (a pairing
    identically 0, every contrast through it exactly 0) drop those contrasts from the degrees
    of freedom instead of dividing by 0."""
    import statsmodels.api as sm

    from simkit.analysis.ratings import additive_fit

    generator = np.random.default_rng(7)
    data = _null_tournament(generator, 500)
    fit = additive_fit(4, data)
    pairs = sorted(data)
    rows = np.column_stack([data[p] for p in pairs])
    design = np.zeros((len(pairs), 3))
    for row, (i, j) in enumerate(pairs):
        for col, sign in ((i, 1.0), (j, -1.0)):
            if col > 0:
                design[row, col - 1] = sign
    gls = sm.GLS(rows.mean(axis=0), design, sigma=np.cov(rows, rowvar=False) / 500).fit()
    assert fit.df == 3 and fit.reference == "F" and fit.deals == 500
    assert fit.chi2 == pytest.approx(float(gls.ssr), rel=1e-6)
    cycle = {(0, 1): generator.normal(0.5, 1.0, 800), (1, 2): generator.normal(0.5, 1.0, 800),
             (0, 2): generator.normal(-0.5, 1.0, 800)}
    bad = additive_fit(3, cycle)
    assert bad.df == 1 and bad.p_value < 1e-6 and not bad.fits
    alike = {(0, 1): data[(0, 1)], (0, 2): data[(0, 1)].copy(), (1, 2): np.zeros(500),
             (0, 3): data[(0, 3)], (1, 3): data[(1, 3)], (2, 3): data[(1, 3)].copy()}  # 1 and 2 play alike
    same = additive_fit(4, alike)
    assert same.df == 1 and np.isfinite(same.chi2)
    # no variance at all: an intransitive table is rejected outright, an additive one is undefined
    constant = {(0, 1): np.full(50, 1.0), (0, 2): np.full(50, 1.0), (1, 2): np.full(50, 1.0)}
    assert additive_fit(3, constant).chi2 == np.inf and not additive_fit(3, constant).fits
    constant[(0, 2)] = np.full(50, 2.0)
    exact = additive_fit(3, constant)
    assert exact.df == 0 and np.isnan(exact.p_value) and exact.fits
    with pytest.raises(ValueError, match="connect"):
        additive_fit(4, {(0, 1): data[(0, 1)], (2, 3): data[(2, 3)]})


@pytest.mark.parametrize("deals, lengths", [(400, None), (40, None), (400, (1.0, 1.0, 0.6, 1.0, 0.45, 0.8))])
def test_the_fit_test_holds_its_level_on_correlated_pairings(deals, lengths):
    """2,000 tournaments under the additive null with pairings as correlated as a real
    tournament's (:func:`_null_tournament`): the fit test rejects 5 % ± 1.5 points of them (Monte
    Carlo s.e. 0.5 point) — with every pairing on the same deals, few of them (40: the F
    reference matters) or pairings of other lengths (stopped early; covariance over the deals
    they share).  The former test, which took the pairings as independent, rejects under 1 %."""
    from simkit.analysis.ratings import additive_fit

    generator = np.random.default_rng(deals + (0 if lengths is None else 1))
    rejected = diagonal = 0
    for _ in range(2_000):
        data = _null_tournament(generator, deals)
        if lengths is not None:
            data = {p: d[: int(round(f * deals))] for (p, d), f in zip(sorted(data.items()), lengths)}
        rejected += additive_fit(4, data).p_value < 0.05
        if lengths is None and deals == 400:
            diagonal += _diagonal_chi2_p(data) < 0.05
    assert 0.035 <= rejected / 2_000 <= 0.065, rejected / 2_000
    assert diagonal / 2_000 < 0.01, diagonal / 2_000


def test_simultaneous_intervals_cover_together():
    """Six pairings: the simultaneous intervals cover all six true means together in about 95 %
    or more of 2,000 repetitions; the marginal ones together far less often."""
    from simkit.analysis.ratings import pairwise_tests

    generator = np.random.default_rng(2026)
    truth = {(i, j): 0.1 * (i - j) for i in range(4) for j in range(i + 1, 4)}
    joint = marginal = 0
    for _ in range(2_000):
        rows = pairwise_tests({p: generator.normal(mu, 1.0, 60) for p, mu in truth.items()}, 0.95)
        joint += all(r["simultaneous_lo"] <= truth[r["pair"]] <= r["simultaneous_hi"] for r in rows)
        marginal += all(r["lo"] <= truth[r["pair"]] <= r["hi"] for r in rows)
    assert joint / 2_000 >= 0.94 and marginal / 2_000 < 0.85, (joint, marginal)


# ---- mutation testing (issue 50): each test below kills named mutants of simkit/analysis/ratings.py


def test_bad_input_is_refused_with_a_message_naming_the_problem():
    """Each validation clause on its own, with its message (an ``or`` turned ``and``, a bound
    moved by one, a message lost)."""
    from simkit.analysis.ratings import additive_fit

    with pytest.raises(ValueError, match="^deal_outcomes: the differences hold NaN$"):
        deal_outcomes(np.array([1.0, np.nan]))
    for pair in ((1, 0), (1, 1), (0, 3), (-1, 2)):
        with pytest.raises(ValueError, match=r"^points_matrix: pairing .* is not \(i, j\) with 0 <= i < j < 3$"):
            points_matrix(3, {pair: np.array([1.0])})
    shape = "^bradley_terry: points must be a square matrix of 2 or more policies, got shape"
    for bad in (np.zeros(4), np.zeros((2, 3)), np.zeros((1, 1))):
        with pytest.raises(ValueError, match=shape):
            bradley_terry(bad)
    for bad in (np.array([[0.0, -1.0], [2.0, 0.0]]), np.array([[0.0, np.inf], [2.0, 0.0]])):
        with pytest.raises(ValueError, match=r"^bradley_terry: points must be finite and >= 0$"):
            bradley_terry(bad)
    with pytest.raises(ValueError, match=r"^bradley_terry: prior_draws must be >= 0, got -0.5$"):
        bradley_terry(np.array([[0.0, 2.0], [1.0, 0.0]]), prior_draws=-0.5)
    with pytest.raises(ValueError, match=r"^bradley_terry: a policy scored no point at all \(use prior_draws > 0\)$"):
        bradley_terry(np.array([[0.0, 2.0], [0.0, 0.0]]), prior_draws=0.0)
    with pytest.raises(ValueError, match="^bradley_terry: the pairings played do not connect every policy$"):
        bradley_terry(np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 0.0]]))
    with pytest.raises(ValueError, match="^resamples must be >= 1, got 0$"):
        bootstrap_ratings(2, {(0, 1): np.array([1.0, 0.0])}, resamples=0)
    good = np.array([0.5, -0.5, 1.0])
    for bad in (np.ones((3, 2)), np.array([1.0]), np.array([1.0, np.nan]), np.array([1.0, np.inf])):
        with pytest.raises(ValueError, match=r"^additive_fit: pairing \(0, 2\) needs 2 or more finite per-deal differences$"):
            additive_fit(3, {(0, 1): good, (0, 2): bad, (1, 2): good})
    for pair in ((1, 0), (1, 1), (0, 3), (-1, 2)):
        with pytest.raises(ValueError, match=r"^additive_fit: pairing .* is not \(i, j\) with 0 <= i < j < 3$"):
            additive_fit(3, {(0, 1): good, pair: good})


def test_the_diagonal_of_the_points_is_ignored():
    """A policy's points against itself are not games (mutant: the diagonal filled with 1)."""
    points = np.array([[0.0, 9.0, 4.0], [1.0, 0.0, 5.0], [6.0, 5.0, 0.0]])
    selfish = points + np.diag([7.0, 3.0, 11.0])
    assert np.allclose(bradley_terry(selfish, prior_draws=0.0), _mle_by_scipy(points), atol=1e-3)


def test_a_star_of_pairings_connects_every_policy():
    """Every pairing through policy 0 (a star) is connected: the search must go on from 0's
    neighbours, not start from 1 (mutant ``frontier = [1]``), in every fit that checks it."""
    from simkit.analysis.ratings import additive_fit, davidson, outcome_counts, payoff_ratings

    star = {(0, 1): np.array([1.0, 0.5, 1.5]), (0, 2): np.array([2.0, 2.5, 1.5]), (0, 3): np.array([-1.0, -0.5, -1.5])}
    assert np.allclose(payoff_ratings(4, star), np.array([0.0, -1.0, -2.0, 1.0]) + 0.5)
    points = np.zeros((4, 4))
    points[0, 1:], points[1:, 0] = [6.0, 3.0, 2.0], [2.0, 3.0, 6.0]
    assert np.allclose(bradley_terry(points, prior_draws=0.0), _mle_by_scipy(points), atol=1e-3)
    wins, ties = outcome_counts(4, star)
    assert np.isfinite(davidson(wins, ties)[0]).all()
    assert additive_fit(4, star).df == 0
    with pytest.raises(ValueError, match="connect"):
        davidson(np.array([[0.0, 3.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 0.0]]), np.zeros((3, 3)))


def test_ties_are_counted_on_both_sides():
    from simkit.analysis.ratings import outcome_counts

    wins, ties = outcome_counts(3, {(0, 1): np.array([0.0, 1.0, -1.0, 0.0]), (1, 2): np.array([-2.0, 0.0])})
    assert wins.tolist() == [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
    assert ties.tolist() == [[0.0, 2.0, 0.0], [2.0, 0.0, 1.0], [0.0, 1.0, 0.0]]


def test_the_bootstraps_are_seeded_and_draw_every_deal():
    """Same seed, same draws; another seed, other draws (mutant: the seed not passed on).  Each
    deal is drawn once per resample on average, the first included (mutant: indices drawn from 1):
    a pairing whose only non-zero deal is the first averages its mean over the resamples, jointly
    and each pairing on its own."""
    from simkit.analysis.ratings import bootstrap_payoff_ratings

    rng = np.random.default_rng(8)
    outcomes = {(0, 1): (rng.random(40) < 0.6).astype(float), (0, 2): (rng.random(40) < 0.7).astype(float),
                (1, 2): (rng.random(40) < 0.5).astype(float)}
    first = bootstrap_ratings(3, outcomes, resamples=20, seed=3)
    assert np.array_equal(first, bootstrap_ratings(3, outcomes, resamples=20, seed=3))
    assert not np.allclose(first, bootstrap_ratings(3, outcomes, resamples=20, seed=4))
    assert bootstrap_ratings(3, outcomes, resamples=1, seed=3).shape == (1, 3)
    spike = np.zeros(5)
    spike[0] = 10.0  # mean 2; a resample's mean is 10 x (draws of deal 0) / 5, sd 1.79
    for other in (5, 7):  # the same deals (joint draws), then another length (each on its own)
        draws = bootstrap_payoff_ratings(3, {(0, 1): spike, (1, 2): np.ones(other)}, resamples=4_000, seed=1)
        gap = draws[:, 0] - draws[:, 1]
        assert abs(gap.mean() - 2.0) < 0.15, gap.mean()  # 5 standard errors
        assert 1.6 < gap.std() < 2.0, gap.std()  # n draws per resample, not one


def test_the_bootstraps_fit_with_the_stated_prior():
    """Outcomes that every resample reproduces (constant per pairing): each bootstrap row is the
    full fit, with the default prior of one virtual draw (tie) per pairing, to the precision of
    the point fit."""
    from simkit.analysis.ratings import bootstrap_davidson, davidson, outcome_counts

    outcomes = {(0, 1): np.ones(10), (0, 2): np.full(10, 0.5), (1, 2): np.zeros(10)}
    points, _ = points_matrix(3, outcomes)
    draws = bootstrap_ratings(3, outcomes, resamples=3, seed=2)
    assert np.allclose(draws, bradley_terry(points, prior_draws=1.0), atol=1e-5)
    differences = {(0, 1): np.ones(10), (0, 2): np.zeros(10), (1, 2): -np.ones(10)}
    ratings = davidson(*outcome_counts(3, differences), prior_ties=1.0)[0]
    assert np.allclose(bootstrap_davidson(3, differences, resamples=3, seed=2), ratings, atol=1e-4)


def test_the_davidson_bootstrap_on_a_cluster_draws_the_same_bytes():
    """``run_in_order`` (here a serial stand-in for a Dask cluster's: each piece numbered, its
    result in order) gives the same bytes as the plain loop, 250 resamples being pieces of
    100, 100 and 50, with the prior passed on."""
    from simkit.analysis.ratings import bootstrap_davidson

    calls = []

    def in_order(function, config, pieces):
        calls.append((config, [len(p) for p in pieces]))
        return [function(config, (number, piece))[1] for number, piece in enumerate(pieces)]

    rng = np.random.default_rng(6)
    differences = {(0, 1): rng.normal(0.3, 1, 30).round(), (0, 2): rng.normal(0, 1, 30).round(),
                   (1, 2): rng.normal(-0.2, 1, 30).round()}
    plain = bootstrap_davidson(3, differences, resamples=250, seed=5, prior_ties=2.0)
    assert np.array_equal(bootstrap_davidson(3, differences, resamples=250, seed=5, prior_ties=2.0,
                                             run_in_order=in_order), plain)
    assert calls == [(2.0, [100, 100, 50])]
    assert not np.allclose(plain, bootstrap_davidson(3, differences, resamples=250, seed=5, prior_ties=1.0))


def test_payoff_weights_are_the_inverse_variances_of_the_means():
    """Pairings of 3, 4 and 12 deals on a table that is not additive: the default weights are
    n / s² (statsmodels' weighted least squares, ratings mean 0), a pairing with no variance
    weighs as the most precise other one, and the bootstrap keeps the full data's weights
    (its rows average to the estimate: the estimator is linear in the resampled means)."""
    import statsmodels.api as sm

    from simkit.analysis.ratings import bootstrap_payoff_ratings, payoff_ratings

    data = {(0, 1): np.array([1.0, 2.5, 0.2]), (0, 2): np.array([0.1, 0.4, -0.3, 0.9]),
            (1, 2): np.array([0.5, -1.5, 2.0, 0.0, 1.0, -0.5, 1.5, 0.7, -0.2, 0.3, 2.2, -1.0])}

    def wls(weights: list) -> np.ndarray:
        design = np.array([[1.0, -1.0, 0.0], [1.0, 0.0, -1.0], [0.0, 1.0, -1.0]])[:, 1:]  # r_0 = 0
        means = [data[p].mean() for p in sorted(data)]
        r = np.concatenate([[0.0], sm.WLS(means, design, weights=weights).fit().params])
        return r - r.mean()

    assert np.allclose(payoff_ratings(3, data), wls([d.size / d.var(ddof=1) for d in data.values()]), atol=1e-12)
    data[(0, 2)] = np.full(4, 0.25)
    precise = max(data[p].size / data[p].var(ddof=1) for p in ((0, 1), (1, 2)))
    assert np.allclose(payoff_ratings(3, data), wls([data[(0, 1)].size / data[(0, 1)].var(ddof=1), precise,
                                                      data[(1, 2)].size / data[(1, 2)].var(ddof=1)]), atol=1e-12)
    # the bootstrap: an outlier on one deal of (0, 1) makes its resampled variance, and so its
    # weight, follow its resampled mean; with the full data's weights the rows average to the
    # estimate (4,000 resamples: s.e. under 0.001), with each resample's own they drift by 0.38
    noise = np.random.default_rng(0)
    table = {(0, 1): noise.normal(0, 0.3, 10).round(2), (0, 2): noise.normal(0, 0.3, 10).round(2),
             (1, 2): noise.normal(0, 0.3, 10).round(2) + 3.0}
    table[(0, 1)][0] += 10.0
    draws = bootstrap_payoff_ratings(3, table, resamples=4_000, seed=9)
    assert np.allclose(draws.mean(axis=0), payoff_ratings(3, table), atol=0.01), draws.mean(axis=0)


def _cycle_rows(data: dict) -> np.ndarray:
    """Per-deal cycle contrasts of four policies' six pairings: d01 - d02 + d12, d01 - d03 + d13,
    d02 - d03 + d23 (a basis of the combinations every additive model makes 0)."""
    return np.column_stack([data[(0, 1)] - data[(0, 2)] + data[(1, 2)], data[(0, 1)] - data[(0, 3)] + data[(1, 3)],
                            data[(0, 2)] - data[(0, 3)] + data[(2, 3)]])


@pytest.mark.parametrize("deals, shift", [(30, 0.0), (12, 0.4), (2, 0.0)])
def test_the_additive_fit_is_hotellings_test_of_the_cycle_contrasts(deals, shift):
    """Every pairing on the same deals: χ² is Hotelling's T² of the per-deal cycle contrasts and
    the p-value its exact F test (statsmodels' test_mvmean, another basis of the contrasts), on
    few deals where F and χ² differ, on a table off additivity, and on two deals (one contrast's
    variance from two rows: Student's t); the fit does not depend on the unit (the same
    differences in 10⁻⁶)."""
    from scipy import stats
    from statsmodels.stats.multivariate import test_mvmean

    from simkit.analysis.ratings import additive_fit

    data = _null_tournament(np.random.default_rng(deals), max(deals, 3))
    data[(1, 3)] = data[(1, 3)] + shift
    if deals == 2:  # three policies, one contrast
        data = {p: data[p][:2] for p in ((0, 1), (0, 2), (1, 2))}
        rows = (data[(0, 1)] - data[(0, 2)] + data[(1, 2)])[:, None]
    else:
        rows = _cycle_rows(data)
    fit = additive_fit(4 if deals > 2 else 3, data)
    if rows.shape[1] > 1:
        hotelling = test_mvmean(rows, 0.0)
        t2, p_value = float(hotelling.t2), float(hotelling.pvalue)
    else:  # one contrast: T² is Student's t squared
        t_test = stats.ttest_1samp(rows[:, 0], 0.0)
        t2, p_value = float(t_test.statistic) ** 2, float(t_test.pvalue)
    assert (fit.df, fit.reference, fit.deals) == (rows.shape[1], "F", deals)
    assert fit.chi2 == pytest.approx(t2, rel=1e-9)
    assert fit.p_value == pytest.approx(p_value, rel=1e-9)
    small = additive_fit(4 if deals > 2 else 3, {p: d * 1e-6 for p, d in data.items()})
    assert small.chi2 == pytest.approx(fit.chi2, rel=1e-6) and small.df == fit.df


def test_the_additive_fit_of_pairings_of_other_lengths_is_asymptotic():
    """Pairings of other lengths (stopped early): the χ² reference, p = P(χ²(df) > χ²), with the
    means' covariance over the deals each two pairings share (statsmodels' GLS, sigma built from
    the shared rows); a design with no cycle (a star) has nothing to test."""
    import statsmodels.api as sm
    from scipy import stats

    from simkit.analysis.ratings import AdditiveFit, additive_fit

    full = _null_tournament(np.random.default_rng(17), 60)
    full[(0, 3)] = full[(0, 3)] + 1.0
    lengths = dict(zip(sorted(full), (60, 45, 60, 30, 52, 60)))
    data = {p: full[p][: lengths[p]] for p in sorted(full)}
    pairs = sorted(data)
    sigma = np.zeros((6, 6))
    for a, pa in enumerate(pairs):
        for b, pb in enumerate(pairs):
            c = min(lengths[pa], lengths[pb])
            sigma[a, b] = c * np.cov(data[pa][:c], data[pb][:c])[0, 1] / (lengths[pa] * lengths[pb])
    design = np.array([[1.0 * (col == i) - (col == j) for col in range(1, 4)] for i, j in pairs])
    gls = sm.GLS(np.array([data[p].mean() for p in pairs]), design, sigma=sigma).fit()
    fit = additive_fit(4, data)
    assert (fit.df, fit.reference, fit.deals) == (3, "chi2", 0)
    assert fit.chi2 == pytest.approx(float(gls.ssr), rel=1e-9)
    assert fit.p_value == pytest.approx(float(stats.chi2.sf(gls.ssr, 3)), rel=1e-9) and fit.p_value < 0.05
    star = additive_fit(4, {p: data[p] for p in ((0, 1), (0, 2), (0, 3))})
    assert (star.chi2, star.df, star.reference, star.deals, star.fits) == (0.0, 0, "chi2", 0, True)
    assert np.isnan(star.p_value)


def test_a_table_with_no_variance_is_judged_by_its_means_alone():
    """No variance: an intransitive table is rejected outright (χ² infinite, p 0, no F), three
    policies that play alike (every difference 0: the contrasts are exactly 0) fit with nothing
    to test; ``fits`` is p >= 0.05 (not a NaN p either)."""
    from simkit.analysis.ratings import AdditiveFit, additive_fit

    cycle = {(0, 1): np.full(50, 1.0), (0, 2): np.full(50, 1.0), (1, 2): np.full(50, 1.0)}
    assert additive_fit(3, cycle) == AdditiveFit(np.inf, 1, 0.0, "chi2", 0)
    alike = additive_fit(3, {p: np.zeros(50) for p in cycle})
    assert (alike.chi2, alike.df, alike.fits) == (0.0, 0, True) and np.isnan(alike.p_value)
    assert AdditiveFit(1.0, 1, 0.05).fits and not AdditiveFit(1.0, 1, 0.0499).fits
    assert AdditiveFit(1.0, 1, 0.5).reference == "chi2" and AdditiveFit(1.0, 1, 0.5).deals == 0


@pytest.mark.parametrize("confidence", [0.95, 0.8])
def test_pairwise_tests_are_scipys_t_tests_with_bonferroni_and_holm(confidence):
    """Each pairing's row against scipy's one-sample t test (its interval at ``confidence``, and
    at 1 - (1 - confidence) / m for the simultaneous one; its p-value) and statsmodels' Holm;
    pairings of 2, 9 and 40 deals; a pairing with no variance has p 0 (or 1 when its mean is 0)."""
    from scipy import stats
    from statsmodels.stats.multitest import multipletests

    from simkit.analysis.ratings import pairwise_tests

    rng = np.random.default_rng(11)
    data = {(0, 1): np.array([0.3, 1.9]), (0, 2): rng.normal(0.4, 1.0, 9), (1, 2): rng.normal(-0.5, 2.0, 40)}
    rows = pairwise_tests(data, confidence)
    tests = [stats.ttest_1samp(data[p], 0.0) for p in sorted(data)]
    holm = multipletests([t.pvalue for t in tests], method="holm")[1]
    for row, p, t, h in zip(rows, sorted(data), tests, holm):
        marginal, joint = t.confidence_interval(confidence), t.confidence_interval(1 - (1 - confidence) / 3)
        assert row["pair"] == p and row["deals"] == data[p].size
        assert row["estimate"] == pytest.approx(data[p].mean(), rel=1e-12)
        assert (row["lo"], row["hi"]) == pytest.approx((marginal.low, marginal.high), rel=1e-9)
        assert (row["simultaneous_lo"], row["simultaneous_hi"]) == pytest.approx((joint.low, joint.high), rel=1e-9)
        assert row["p_value"] == pytest.approx(t.pvalue, rel=1e-9) and row["p_holm"] == pytest.approx(h, rel=1e-9)
    flat = pairwise_tests({(0, 1): np.full(5, 0.5), (0, 2): np.zeros(5)}, confidence)
    assert [r["p_value"] for r in flat] == [0.0, 1.0] and [r["p_holm"] for r in flat] == [0.0, 1.0]


def test_the_stated_defaults(monkeypatch):
    """Defaults are part of the interface: 2,000 resamples from seed 0, 95 % confidence, one
    virtual draw, and bootstrap_ratings passes a prior other than the default on.  (Davidson's
    bootstrap with its fit replaced by the resample's counts: 4,000 fits would take a minute.)"""
    from simkit.analysis import ratings
    from simkit.analysis.ratings import bootstrap_davidson, bootstrap_payoff_ratings, pairwise_tests

    monkeypatch.setattr(ratings, "davidson", lambda wins, ties, prior_ties=1.0: (np.array([wins[0, 1], ties[0, 1]]), 1.0))

    differences = {(0, 1): np.array([1.0, 0.0, -2.0, 3.0])}
    outcomes = {(0, 1): deal_outcomes(differences[(0, 1)])}
    assert np.array_equal(bootstrap_ratings(2, outcomes), bootstrap_ratings(2, outcomes, resamples=2_000, seed=0))
    assert np.array_equal(bootstrap_payoff_ratings(2, differences),
                          bootstrap_payoff_ratings(2, differences, resamples=2_000, seed=0))
    assert np.array_equal(bootstrap_davidson(2, differences), bootstrap_davidson(2, differences, resamples=2_000, seed=0))
    assert pairwise_tests(differences) == pairwise_tests(differences, 0.95)
    points = np.array([[0.0, 9.0, 2.0], [1.0, 0.0, 4.0], [3.0, 5.0, 0.0]])
    assert np.array_equal(bradley_terry(points), bradley_terry(points, prior_draws=1.0))
    constant = {(0, 1): np.ones(6), (0, 2): np.full(6, 0.5), (1, 2): np.zeros(6)}
    points, _ = points_matrix(3, constant)
    assert np.allclose(bootstrap_ratings(3, constant, resamples=2, prior_draws=2.0), bradley_terry(points, prior_draws=2.0),
                       atol=1e-5)


def test_a_pairing_of_one_deal_or_one_point_counts():
    """A pair that met once has played (it gets its virtual draw); a policy with one point is
    not pointless (the module's example: 9 points to 1 is 400 log10 9 apart); Davidson's
    pairings that played count whatever their outcomes: only ties, wins level, one deal."""
    from simkit.analysis.ratings import davidson, outcome_counts

    once = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 4.0], [0.0, 2.0, 0.0]])  # 0 beat 1 on the one deal they played
    assert np.allclose(bradley_terry(once, prior_draws=1.0), _mle_by_scipy(once + 0.5 * (once + once.T > 0)), atol=1e-3)
    r = bradley_terry(np.array([[0.0, 9.0], [1.0, 0.0]]), prior_draws=0.0)
    assert r[0] - r[1] == pytest.approx(400 * np.log10(9.0))
    chain = {(0, 1): np.zeros(4), (1, 2): np.array([1.0, -1.0, 2.0, -2.0]), (2, 3): np.array([0.5])}
    wins, ties = outcome_counts(4, chain)
    ratings, nu = davidson(wins, ties)
    assert np.isfinite(ratings).all() and ratings[2] > ratings[3] and nu > 0


def test_payoff_ratings_of_a_table_with_no_variance_are_unweighted_least_squares():
    """Every pairing constant: equal weights.  The cycle 1, 1, 1 (0 over 1, 1 over 2, 0 over 2
    by only 1) spreads its residual 1 evenly: r = (2/3, 0, -2/3), in the bootstrap as well."""
    from simkit.analysis.ratings import bootstrap_payoff_ratings, payoff_ratings

    cycle = {(0, 1): np.ones(5), (0, 2): np.ones(5), (1, 2): np.ones(5)}
    assert np.allclose(payoff_ratings(3, cycle), [2 / 3, 0.0, -2 / 3], atol=1e-12)
    assert np.allclose(bootstrap_payoff_ratings(3, cycle, resamples=3), [2 / 3, 0.0, -2 / 3], atol=1e-12)


def test_the_additive_fit_tolerates_rounding_but_not_a_departure():
    """No variance: an exactly additive table is additive whatever the rounding of its values
    (thirds and sixths, tenths, means up to 10⁵); a constant departure of 3·10⁻⁹ 牌 on unit
    means is a departure."""
    from simkit.analysis.ratings import additive_fit

    for values in ((33333.3, 99999.9, 66666.6), (1 / 3, 1 / 2, 1 / 6), (0.1, 0.3, 0.2)):
        # before the fix the rounding of the means' covariance (1e-34) read as variance: df 1, p < 0.05
        exact = additive_fit(3, {p: np.full(n, v) for p, v, n in zip(((0, 1), (0, 2), (1, 2)), values, (20, 60, 7))})
        assert exact.df == 0 and exact.fits, (values, exact)
    off = additive_fit(3, {(0, 1): np.full(20, 1.0 + 3e-9), (0, 2): np.full(20, 1.0), (1, 2): np.full(20, 0.0)})
    assert off.chi2 == np.inf and not off.fits

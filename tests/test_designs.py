"""Designs of a duplicate comparison (``compare --design six|pairs``, simkit.runner.duplicate).

Design ``pairs`` plays each complementary pair of seatings (A alone at seat i, then B alone
there) on deals of its own seed.  What these tests catch: a pair whose two seatings play
different deals (then the deal's luck no longer cancels), pairs that share their deals (then
nothing is gained), a seating left on the wrong seed, a row that is not the six seatings' mean,
an adjustment accepted on rows of three deals, and a folder of one design resumed as the other.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from simkit.errors import SimkitError
from simkit.rng import seating_pair_seed
from simkit.runner.duplicate import SEATING_PAIRS, SEATINGS, read_comparison, seating_dir
from simkit.runner.simulate import simulate
from simkit.storage import load_dataset
from simkit.storage.files import read_checked_json, write_checked_json
from simkit.studies.compare import compare, load_comparison, seating_differences
from simkit.specs.simulate import SimulateSpec
from simkit.specs.base import Execution
from simkit.specs.compare import CompareSpec
from simkit.specs.tournament import TournamentSpec

QUIET = Execution(quiet=True)

DEALT = [f"dealt_{name}_{seat}" for name in ("jiang", "pairs", "zi", "nao", "chariots", "idle") for seat in range(3)]
SEED = 17


@pytest.fixture(scope="module")
def pairs_folder(tmp_path_factory):
    out = tmp_path_factory.mktemp("designs") / "pairs"
    result = compare(CompareSpec("greedy", "random", deals=60, seed=SEED, batch_size=30, design="pairs"), out,
                     Execution(quiet=True))
    return out, result


def _dealt(out, seating, batches: int | None = None) -> pd.DataFrame:
    return load_dataset(seating_dir(out, seating), columns=DEALT, batches=batches)[DEALT].reset_index(drop=True)


def _complement(seating: str) -> str:
    """The seating with A and B swapped: the other half of its pair."""
    return seating.translate(str.maketrans("AB", "BA"))


def test_each_pair_plays_one_deal_and_the_pairs_play_different_deals(pairs_folder):
    out, _ = pairs_folder
    assert sorted(map(sorted, SEATING_PAIRS)) == sorted(sorted((s, _complement(s))) for s in ("ABB", "BAB", "BBA"))
    for lone_a in ("ABB", "BAB", "BBA"):  # the deal's luck cancels within a pair
        pd.testing.assert_frame_equal(_dealt(out, lone_a), _dealt(out, _complement(lone_a)))
    first = [_dealt(out, lone_a).to_numpy() for lone_a in ("ABB", "BAB", "BBA")]
    for i in range(3):
        for j in range(i + 1, 3):
            assert (first[i] != first[j]).any(axis=1).mean() > 0.9  # other deals, not the same ones


def test_pair_zero_plays_the_comparisons_own_deals_and_the_others_their_derived_seeds(pairs_folder, tmp_path):
    out, _ = pairs_folder
    assert seating_pair_seed(SEED, 0) == SEED
    assert len({seating_pair_seed(SEED, pair) for pair in range(3)}) == 3
    columns = [f"payoff_{k}" for k in range(3)] + DEALT
    for pair, seating in ((0, "ABB"), (1, "ABA"), (2, "BBA")):
        policies = ["greedy" if c == "A" else "random" for c in seating]
        alone = simulate(SimulateSpec(60, policies, seating_pair_seed(SEED, pair), batch_size=30, seating="fixed"),
                         tmp_path / seating, QUIET)
        pd.testing.assert_frame_equal(load_dataset(seating_dir(out, seating), columns=columns)[columns],
                                      load_dataset(alone, columns=columns)[columns])


def test_a_row_is_the_mean_of_the_six_seatings_differences(pairs_folder):
    out, result = pairs_folder
    per = seating_differences(out)
    for j, seating in enumerate(SEATINGS):
        payoff = load_dataset(seating_dir(out, seating), columns=[f"payoff_{k}" for k in range(3)]).to_numpy(float)
        is_a = np.array([c == "A" for c in seating])
        np.testing.assert_allclose(per[:, j], payoff[:, is_a].mean(axis=1) - payoff[:, ~is_a].mean(axis=1))
    assert result.test.mean == pytest.approx(per.mean())
    assert result.design == "pairs" and result.to_json()["design"] == "pairs"
    assert "60 rows x 3 seating pairs" in result.text() and "(180 deals, design pairs)" in result.text()
    assert load_comparison(out).design == "pairs" and load_comparison(out).test.mean == result.test.mean


def test_pairs_estimate_the_same_difference_as_six(tmp_path):
    """Unbiased for the same mean: on 1,500 rows of each, the two estimates agree within their
    joint standard error (a pair with the sign of one seating flipped, or a seating counted
    twice, moves greedy - random's +1.7 by far more)."""
    six = compare(CompareSpec("greedy", "random", deals=1500, seed=5205011, batch_size=1500), tmp_path / "six",
                  Execution(quiet=True))
    pairs = compare(CompareSpec("greedy", "random", deals=1500, seed=5205012, batch_size=1500, design="pairs"),
                    tmp_path / "pairs", Execution(quiet=True))
    se = np.hypot(six.test.standard_error, pairs.test.standard_error)
    assert abs(six.test.mean - pairs.test.mean) < 3.5 * se
    assert six.design == "six" and six.to_json()["design"] == "six"


def test_an_adjustment_or_an_unknown_design_is_refused_before_any_work(tmp_path):
    for kwargs, words in (({"luck": True}, "value model (luck)"), ({"variance_reduction": "regression"}, "'regression'"),
                          ({"variance_reduction": "luck"}, "'luck'"), ({"design": "trio"}, "design must be one of")):
        kwargs = {"design": "pairs", **kwargs}
        with pytest.raises(SimkitError, match="design") as info:
            compare(CompareSpec("greedy", "random", deals=10, seed=1, **kwargs), tmp_path / "x", Execution(quiet=True))
        assert words in str(info.value) and "\n" not in str(info.value)
        assert not (tmp_path / "x").exists()


def test_a_folder_of_one_design_is_refused_for_the_other(pairs_folder, tmp_path):
    out, _ = pairs_folder
    with pytest.raises(SimkitError, match="its design is 'pairs', this run's is 'six'"):
        compare(CompareSpec("greedy", "random", deals=60, seed=SEED, batch_size=30), out, Execution(quiet=True))
    compare(CompareSpec("greedy", "random", deals=20, seed=SEED, batch_size=20), tmp_path / "six",
            Execution(quiet=True))
    with pytest.raises(SimkitError, match="its design is 'six', this run's is 'pairs'"):
        compare(CompareSpec("greedy", "random", deals=20, seed=SEED, batch_size=20, design="pairs"), tmp_path / "six",
                Execution(quiet=True))


def test_a_folder_written_before_designs_resumes_as_six(tmp_path):
    out = tmp_path / "old"
    first = compare(CompareSpec("greedy", "random", deals=20, seed=SEED, batch_size=20), out, Execution(quiet=True))
    path = out / "comparison.json"
    data = read_checked_json(path, "identity")
    assert data["design"] == "six"
    write_checked_json(path, {k: v for k, v in data.items() if k != "design"})
    before = path.read_bytes()
    again = compare(CompareSpec("greedy", "random", deals=20, seed=SEED, batch_size=20), out, Execution(quiet=True))
    assert path.read_bytes() == before  # read, not rewritten
    assert "design" not in read_comparison(out) and again.design == "six"
    np.testing.assert_array_equal(again.per_seating, first.per_seating)
    with pytest.raises(SimkitError, match="its design is 'six', this run's is 'pairs'"):
        compare(CompareSpec("greedy", "random", deals=20, seed=SEED, batch_size=20, design="pairs"), out,
                Execution(quiet=True))


def test_a_comparison_json_with_an_unknown_design_is_a_one_line_error(tmp_path):
    out = tmp_path / "c"
    compare(CompareSpec("greedy", "random", deals=20, seed=SEED, batch_size=20), out, Execution(quiet=True))
    path = out / "comparison.json"
    write_checked_json(path, {**read_checked_json(path, "identity"), "design": "trio"})
    with pytest.raises(SimkitError, match="has design 'trio'"):
        load_comparison(out)


def test_the_cli_takes_design_pairs_and_refuses_it_with_luck(tmp_path):
    run = [sys.executable, "-m", "simkit", "compare", "greedy", "random", "--deals", "20", "--seed", str(SEED),
           "--batch-size", "20", "--quiet", "--json", "--design", "pairs"]
    proc = subprocess.run(run + ["--out", str(tmp_path / "p")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["design"] == "pairs"
    proc = subprocess.run(run + ["--out", str(tmp_path / "q"), "--luck"], capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "--design 'pairs'" in proc.stderr
    assert not (tmp_path / "q").exists()


def test_a_sequential_test_plays_the_pairs_design_too(tmp_path):
    out = tmp_path / "s"
    result = compare(CompareSpec("greedy", "random", deals=400, seed=SEED, batch_size=100, design="pairs",
                                 sprt=(0.5, 0.05, 0.05), burn_in=100), out, Execution(quiet=True))
    assert read_comparison(out)["design"] == "pairs" and result.design == "pairs"
    assert "rows x 3 seating pairs" in result.text()
    first, other = _dealt(out, "ABB", batches=1).to_numpy(), _dealt(out, "BAB", batches=1).to_numpy()
    assert (first != other).any(axis=1).mean() > 0.9


# -- tournaments and experiments take the design too ------------------------------------------


def test_a_tournament_of_design_pairs_plays_the_same_pairs_of_deals_in_every_pairing(tmp_path):
    from simkit.studies.tournament import pairing_dir, run_tournament, tournament_section

    out = tmp_path / "t"
    result = run_tournament(TournamentSpec(["random", "greedy", "patient"], deals=40, seed=SEED, batch_size=40,
                                           resamples=50, design="pairs"), out, Execution(quiet=True))
    assert result.design == "pairs" and read_checked_json(out / "tournament.json", "identity")["design"] == "pairs"
    for i, j in ((0, 1), (0, 2), (1, 2)):
        assert read_comparison(pairing_dir(out, i, j))["design"] == "pairs"
    for seating in ("ABB", "BAB", "AAB"):  # the joint bootstrap over rows needs the same deals in every pairing
        pd.testing.assert_frame_equal(_dealt(pairing_dir(out, 0, 1), seating), _dealt(pairing_dir(out, 1, 2), seating))
    assert (_dealt(pairing_dir(out, 0, 1), "ABB").to_numpy() != _dealt(pairing_dir(out, 0, 1), "BAB").to_numpy()).any()
    text = "\n".join(tournament_section(result, tmp_path / "report"))
    assert "each pair of seatings on deals of its own seed" in text and "40 rows per pairing" in text
    with pytest.raises(SimkitError, match="its design is 'pairs', this run's is 'six'"):
        run_tournament(TournamentSpec(["random", "greedy", "patient"], deals=40, seed=SEED, batch_size=40, resamples=50),
                       out, Execution(quiet=True))


def test_a_tournament_refuses_luck_with_pairs_and_resumes_an_old_folder_as_six(tmp_path):
    from simkit.studies.tournament import run_tournament

    with pytest.raises(SimkitError, match="design 'pairs'"):
        run_tournament(TournamentSpec(["random", "greedy"], deals=20, seed=SEED, luck=True, design="pairs"),
                       tmp_path / "x", Execution(quiet=True))
    assert not (tmp_path / "x").exists()
    out = tmp_path / "old"
    first = run_tournament(TournamentSpec(["random", "greedy"], deals=20, seed=SEED, batch_size=20, resamples=50), out,
                           Execution(quiet=True))
    path = out / "tournament.json"
    write_checked_json(path, {k: v for k, v in read_checked_json(path, "identity").items() if k != "design"})
    before = path.read_bytes()
    again = run_tournament(TournamentSpec(["random", "greedy"], deals=20, seed=SEED, batch_size=20, resamples=50), out,
                           Execution(quiet=True))
    assert path.read_bytes() == before and again.design == "six"
    np.testing.assert_array_equal(again.payoff_ratings, first.payoff_ratings)


def test_an_experiment_passes_its_entries_design(tmp_path):
    from simkit.experiment.run import run_experiment
    from simkit.experiment.spec import ExperimentError, parse_experiment

    head = 'name = "d"\nseed = 3\nbatch_size = 20\n[[comparison]]\na = "greedy"\nb = "random"\ndeals = 20\n'
    assert parse_experiment(head).comparisons[0].design == "six"
    for extra, words in (('design = "trio"\n', "'design' must be one of six, pairs"),
                         ('design = "pairs"\nluck = true\n', "'design' pairs")):
        with pytest.raises(ExperimentError, match=words):
            parse_experiment(head + extra)
    path = tmp_path / "d.toml"
    path.write_text(head + 'design = "pairs"\n', encoding="utf-8")
    run_experiment(path, out=tmp_path / "run", execution=Execution(quiet=True))
    folders = [p for p in (tmp_path / "run" / "data").iterdir() if p.name.startswith("cmp-")]
    assert len(folders) == 1 and read_comparison(folders[0])["design"] == "pairs"

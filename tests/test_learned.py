"""The learned policy: its features, its network's numba forward pass, its model files.

What each test catches:

* ``test_forward_equals_sklearn``: an export that transposes a layer, drops a bias, forgets
  the feature scale or mixes the layers' order (the kernel against ``MLPRegressor.predict``);
* ``test_candidate_values_equal_the_full_forward``: the per-candidate shortcut of the first
  layer (only the changed features' columns) forgetting a feature it changed or leaving the
  scratch changed for the next candidate;
* ``test_features_match_the_naive_twin``: any feature computed wrongly (a wrong unseen count,
  a 吃 taking the wrong cards, history counted for the wrong seat, ...) against
  ``tests/naive.py``'s plain Python from the definitions;
* ``test_expert_scores_rank_its_choice_first``: the scores behind ``F_GAP`` disagreeing with
  expert's own choice, or its shortcut (no danger weighed for a discard far behind) changing a
  score that counts;
* ``test_learned_chooses_by_value_and_margin``: the choice rule (win, single action, argmax,
  margin fallback to expert's choice);
* the model file tests: a missing, truncated, foreign or other-layout file not refused in one
  line naming it; a dataset resumed after its model was edited.
"""

from __future__ import annotations

import io
import zipfile

import numpy as np
import pytest

from simkit.engine import kernel as E
from simkit.engine import layout as L
from simkit.engine.env import Game, Observation
from simkit.errors import SimkitError
from simkit.policies.builtin import POLICY_WORK_SIZE
from simkit.policies.expert import EXPERT_DEFAULTS, expert_act, expert_act_scores
from simkit.policies.learned import (
    FEATURES,
    GAP_CAP,
    GAP_UNIT,
    H_MARGIN,
    MODEL_OFFSET,
    N_FEATURES,
    action_features,
    action_values,
    learned_act,
    network_value,
)
from simkit.policies.model import ModelError, load_model, model_block, model_bytes
from simkit.policies.registry import PolicyError, parse_policy, policy_sources
from simkit.rules import RuleSet
from simkit.specs.simulate import SimulateSpec
from simkit.specs.base import Execution
from tests.naive import naive_learned_features

QUIET = Execution(quiet=True)

sklearn = pytest.importorskip("sklearn")


def _random_block(seed: int, hidden=(16, 8), margin=0.0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    h1, h2 = hidden
    return model_block(rng.normal(0, 0.3, (N_FEATURES, h1)), rng.normal(0, 0.1, h1), rng.normal(0, 0.3, (h1, h2)),
                       rng.normal(0, 0.1, h2), rng.normal(0, 0.3, h2), 0.05, np.array(EXPERT_DEFAULTS), margin)


def _write_model(path, block, rules=None) -> str:
    path.write_bytes(model_bytes(block, {"rules": rules or RuleSet().to_dict(), "training": {}}))
    return str(path)


def _decisions(seed: int, deals: int, rules: RuleSet = RuleSet()):
    """(observation array, legal mask) at every decision of expert deals."""
    game = Game(rules, policies=("expert", "expert", "expert"))
    rules_array = rules.to_array()
    work = np.zeros(POLICY_WORK_SIZE, np.int64)
    for deal in range(deals):
        state = game.new_initial_state(seed=seed, deal=deal)
        while not state.is_terminal():
            s = np.array(state.state_array)
            p = int(s[L.S_PLAYER])
            mask = np.zeros(L.N_ACTIONS, np.bool_)
            E.legal_mask(s.copy(), rules_array, mask, E.new_engine_workspace())
            obs = np.zeros(L.N_OBS, np.int64)
            E.observe(s, p, obs)
            yield obs, mask
            action = L.A_WIN if mask[L.A_WIN] else expert_act(obs, mask, np.array(EXPERT_DEFAULTS), rules_array, work)
            state.apply_action(int(action))


def test_forward_equals_sklearn():
    from sklearn.neural_network import MLPRegressor

    from simkit.learn.fit import network_block, scaled

    rng = np.random.default_rng(3)
    x = rng.integers(0, 5, size=(3000, N_FEATURES)).astype(np.uint8)
    y = (x[:, :40].astype(float) @ rng.normal(size=40)).astype(np.float32)
    network = MLPRegressor(hidden_layer_sizes=(12, 6), max_iter=3, random_state=0).fit(scaled(x), y)
    block = network_block(network, np.array(EXPERT_DEFAULTS), 0.0)
    work = np.zeros(POLICY_WORK_SIZE, np.int64)
    probe = rng.integers(0, 9, size=(200, N_FEATURES)).astype(np.int64)
    ours = np.array([network_value(block, row, work) for row in probe])
    theirs = network.predict(scaled(probe)).astype(float)
    assert np.abs(theirs).max() > 0.1  # a real, non-constant network
    np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-4)  # sklearn fits in float32


def test_candidate_values_equal_the_full_forward():
    block = _random_block(1)
    rules = RuleSet().to_array()
    work = np.zeros(POLICY_WORK_SIZE, np.int64)
    values = np.zeros(L.N_ACTIONS)
    row = np.zeros(N_FEATURES, np.int64)
    checked = 0
    for obs, mask in _decisions(seed=11, deals=6):
        if mask.sum() < 2 or mask[L.A_WIN]:
            continue
        action_values(obs, mask, block, rules, work, values)
        for a in np.flatnonzero(mask):
            action_features(obs, mask, int(a), block, rules, work, row)
            assert values[a] == pytest.approx(network_value(block, row, work), abs=1e-9)
            checked += 1
        assert np.all(np.isinf(values[~mask]))
    assert checked > 300


@pytest.mark.parametrize("rules", [RuleSet(), RuleSet.from_strings(["drawn_card_chow_by=drawer_then_next",
                                                                     "pass_locks_type=off"])], ids=["default", "variant"])
def test_features_match_the_naive_twin(rules):
    block = _random_block(2)
    rules_array = rules.to_array()
    work = np.zeros(POLICY_WORK_SIZE, np.int64)
    scores = np.zeros(L.N_ACTIONS)
    row = np.zeros(N_FEATURES, np.int64)
    kinds = set()
    for obs, mask in _decisions(seed=5, deals=8, rules=rules):
        if mask.sum() < 2 or mask[L.A_WIN]:
            continue
        choice = expert_act_scores(obs, mask, np.array(EXPERT_DEFAULTS), rules_array, work, scores,
                                   GAP_UNIT * GAP_CAP)
        observation = Observation.from_array(obs)
        for a in np.flatnonzero(mask):
            action_features(obs, mask, int(a), block, rules_array, work, row)
            naive = naive_learned_features(observation, int(a), scores, int(choice))
            for name, offset, size in FEATURES.table:
                assert list(row[offset : offset + size]) == naive[name], (name, int(a))
            kinds.add(int(a) if a >= L.A_WIN else 0)
    assert {0, L.A_PASS, L.A_PENG} <= kinds  # discards, passes and claims were all checked


def test_expert_scores_rank_its_choice_first():
    rules = RuleSet().to_array()
    work = np.zeros(POLICY_WORK_SIZE, np.int64)
    scores = np.zeros(L.N_ACTIONS)
    short = np.zeros(L.N_ACTIONS)
    n = skipped = 0
    behind = GAP_UNIT * GAP_CAP
    for obs, mask in _decisions(seed=8, deals=6):
        if mask[L.A_WIN] or mask.sum() < 2:
            continue
        choice = expert_act_scores(obs, mask, np.array(EXPERT_DEFAULTS), rules, work, scores, np.inf)
        assert choice == expert_act(obs, mask, np.array(EXPERT_DEFAULTS), rules, work)
        assert expert_act_scores(obs, mask, np.array(EXPERT_DEFAULTS), rules, work, short, behind) == choice
        legal = np.flatnonzero(mask)
        if np.isfinite(scores[legal]).all():
            assert scores[choice] == scores[legal].max()
            n += 1
        far = np.isinf(short) & mask
        assert np.array_equal(short[mask & ~far], scores[mask & ~far])  # the shortcut changes no score it keeps
        assert np.all(scores[far] <= scores[choice] - behind)  # and drops only scores that far behind
        skipped += far.sum()
    assert n > 100 and skipped > 20


def test_learned_chooses_by_value_and_margin():
    rules = RuleSet().to_array()
    work = np.zeros(POLICY_WORK_SIZE, np.int64)
    values = np.zeros(L.N_ACTIONS)
    free = np.concatenate([np.zeros(MODEL_OFFSET), _random_block(4, margin=0.0)])
    stubborn = free.copy()
    stubborn[MODEL_OFFSET + H_MARGIN] = 1e9  # never leaves expert's choice
    differ = 0
    for obs, mask in _decisions(seed=9, deals=5):
        action = learned_act(obs, mask, free, rules, work)
        if mask[L.A_WIN]:
            assert action == L.A_WIN
            continue
        if mask.sum() == 1:
            assert action == np.flatnonzero(mask)[0]
            continue
        choice = action_values(obs, mask, free[MODEL_OFFSET:], rules, work, values)
        assert action == int(np.argmax(np.where(mask, values, -np.inf)))
        assert learned_act(obs, mask, stubborn, rules, work) == choice
        differ += action != choice
    assert differ > 10  # a random network often disagrees with expert: the margin rule was exercised


# ---- model files


def test_model_file_round_trip_and_digest(tmp_path):
    block = _random_block(5)
    path = _write_model(tmp_path / "m.npz", block)
    model = load_model(path)
    assert np.array_equal(model.block, block) and model.hidden == (16, 8) and len(model.digest) == 64
    spec = parse_policy(f"learned:{path}")
    assert spec.name == f"learned:{path}"
    assert policy_sources([spec]) == ((spec.name, f"model sha256:{model.digest}"),)


def _one_line_error(path: str, match: str) -> None:
    for load in (lambda: load_model(path), lambda: parse_policy(f"learned:{path}")):
        with pytest.raises((ModelError, PolicyError)) as info:
            load()
        text = str(info.value)
        assert "\n" not in text and path in text and match in text, text


def test_missing_truncated_foreign_and_other_layout_files_are_refused(tmp_path):
    good = (tmp_path / "good.npz")
    _write_model(good, _random_block(6))
    data = good.read_bytes()
    _one_line_error(str(tmp_path / "absent.npz"), "does not exist")
    (tmp_path / "cut.npz").write_bytes(data[: len(data) // 2])
    _one_line_error(str(tmp_path / "cut.npz"), "truncated")
    (tmp_path / "text.npz").write_text("hello")
    _one_line_error(str(tmp_path / "text.npz"), "not a simkit model")
    buffer = io.BytesIO()
    np.savez(buffer, weights=np.zeros(3))
    (tmp_path / "foreign.npz").write_bytes(buffer.getvalue())
    _one_line_error(str(tmp_path / "foreign.npz"), "not a simkit model")
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        meta = np.load(io.BytesIO(archive.read("meta.npy")))
        block = np.load(io.BytesIO(archive.read("block.npy")))
    other = str(meta[()]).replace('"F_GAP"', '"F_OLD"')
    buffer = io.BytesIO()
    np.savez(buffer, block=block, meta=np.array(other))
    (tmp_path / "layout.npz").write_bytes(buffer.getvalue())
    _one_line_error(str(tmp_path / "layout.npz"), "another feature layout")
    buffer = io.BytesIO()
    np.savez(buffer, block=block[:-5], meta=meta)
    (tmp_path / "short.npz").write_bytes(buffer.getvalue())
    _one_line_error(str(tmp_path / "short.npz"), "truncated")


def test_resume_with_an_edited_model_is_refused(tmp_path):
    from simkit.runner.simulate import simulate

    path = _write_model(tmp_path / "m.npz", _random_block(7))
    out = tmp_path / "run"
    simulate(SimulateSpec(40, [f"learned:{path}", "expert", "expert"], 1, batch_size=20), out, QUIET, max_batches=1)
    _write_model(tmp_path / "m.npz", _random_block(8))
    with pytest.raises(SimkitError) as info:
        simulate(SimulateSpec(40, [f"learned:{path}", "expert", "expert"], 1, batch_size=20), out, QUIET)
    assert "\n" not in str(info.value)


def test_a_model_under_other_rules_warns_in_one_line(tmp_path):
    from simkit.errors import ModelRulesWarning
    from simkit.policies.registry import warn_model_rules

    path = _write_model(tmp_path / "m.npz", _random_block(9))
    specs = [parse_policy(f"learned:{path}")]
    assert warn_model_rules(specs, RuleSet().to_dict()) == []  # its own rules: silent
    with pytest.warns(ModelRulesWarning) as caught:
        texts = warn_model_rules(specs, RuleSet.from_strings(["pass_locks_type=off"]).to_dict())
    assert len(texts) == 1 and "pass_locks_type=off" in texts[0] and "\n" not in texts[0]
    assert len(caught) == 1


def test_a_model_plays_the_same_on_worker_processes_and_in_replay(tmp_path):
    """A model that often leaves expert's choice (a random network, margin 0): the same bytes
    with 1 and 2 worker processes (the weights travel with the batches), and ``replay`` of a
    deal gives the dataset's row (catches a worker reading another model or none, and a
    kernel path that seats the parameter rows differently)."""
    import pandas as pd

    from simkit.replay import replay_events
    from simkit.runner.simulate import simulate
    from simkit.storage import load_dataset

    path = _write_model(tmp_path / "m.npz", _random_block(10, margin=0.0))
    policies = f"learned:{path},expert,greedy"
    one = simulate(SimulateSpec(40, policies, 5, batch_size=20, seating="rotate"), tmp_path / "one", QUIET)
    two = simulate(SimulateSpec(40, policies, 5, batch_size=20, seating="rotate"), tmp_path / "two",
                   Execution(workers=2, quiet=True))
    files = sorted(p.name for p in one.glob("*.parquet"))
    assert len(files) == 2 and all((one / f).read_bytes() == (two / f).read_bytes() for f in files)
    rows = load_dataset(one)
    deal = 7
    end = [e for e in replay_events(5, deal, policies, seating="rotate") if e["event"] == "end"][0]
    payoffs = [int(rows.loc[rows.deal_id == deal, f"payoff_{k}"].iloc[0]) for k in range(3)]
    assert end["payoffs"] == payoffs and isinstance(rows, pd.DataFrame)

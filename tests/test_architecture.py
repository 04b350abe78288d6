"""The import architecture of simkit, read from the source with ``ast`` (nothing is imported).

Imports flow one way (issue 10): each module belongs to one layer of :data:`LAYERS`, and
imports only from its own layer or the layers below it.  Where a module sits:

* ``base``: what every layer may use and that uses nothing of simkit but itself: the package
  (``simkit/__init__.py``: ``__version__``, and at import ``kernel_cache``'s guard, which keys
  numba's cache of simkit's kernels by the digest of its sources), ``jit`` (how the kernels compile), ``errors``,
  ``cards``, ``rules``, ``exposed``
  (exposed groups and the rows ``EXP_*`` of their kernel form), ``rng`` (the xoshiro PRNG and
  the per-deal seeding ``root_key`` / ``stream_state``), ``deck`` (shuffles, deals, and
  ``deal_deck``: the deck of deal N, which the engine, the runner and the dealt-hand
  statistics share), and ``generate`` (random holdings for tests and benchmarks: a tool, but it
  needs only cards, deck, rng and the ``EXP_*`` rows, so any layer's tests may use it).
* ``evaluator`` → ``engine`` (state machine, layout, the step-by-step ``env``, and ``loop``: the
  compiled decision loop, given a policy dispatcher as an argument; it never imports a policy) → ``policies`` (they call the engine kernel: allowed, policies are above it).
* ``specs`` (one frozen, validated spec per run kind: its defaults, its identity) sits above
  ``policies`` (a spec parses its policies) and below everything that runs a spec.
* ``storage`` (files, datasets, locks; no game logic) sits *below* ``runner``: the issue lists
  "runner → storage" in the order data flows (the runner produces rows, storage keeps them), but
  as imports the runner writes through storage's writers, so storage is the lower layer.
* ``runner``: ``runner/play.py`` (the loop that asks the policies for every decision: whole
  deals, batches, sessions, user-policy kernels), ``simulate``, ``batch``, ``duplicate``, and
  ``replay`` (one deal as JSON lines).
* ``analysis`` (pure statistics on data: summaries, intervals, tests, sequential tests,
  ratings, exact probabilities, plots, reports of a dataset; it plays no deal) → ``studies``
  (what runs simulations to answer a question: ``compare``, ``tournament``, ``tuning``,
  ``equity``, the dealt-hand simulation ``dealt`` and its Monte Carlo ``probability`` and
  ``conditional``) → ``learn`` (``simkit train``: self-play rollouts, the network's fit with the
  optional scikit-learn, generations; the ``learned`` policy that plays a model is in
  ``policies``, with numpy and numba only) → ``tools`` (``experiment``: runs simulations and writes reports; ``bench``;
  ``warmup``: compiles the kernels of each command ahead of use) →
  ``cli`` (``cli``, ``cliargs``: the commands' arguments and their checks, ``__main__``).

Three more rules, checked here for every module of ``simkit/`` and ``experiments/*.py``
(``tests/`` may reach into internals):

* imports sit at module level (no function-level import dodging a cycle); the CLI alone imports
  lazily, for a fast start (see the comment in ``simkit/cli.py``);
* the module-level imports form no cycle (counting the package ``__init__`` an import runs);
* no module imports or reads (``module._name``) a private name of another simkit module: a
  kernel other layers call has a public name.

Run ``python tests/test_architecture.py`` to list every breach.
"""

from __future__ import annotations

import ast
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGE = "simkit"

# lowest first: a module may import from its own layer and every layer before it
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("base", ("simkit", "simkit.kernel_cache", "simkit.defaults", "simkit.archive", "simkit.progress", "simkit.glossary", "simkit.jit", "simkit.errors", "simkit.cards", "simkit.rules", "simkit.exposed", "simkit.rng",
              "simkit.deck", "simkit.generate", "simkit.lifeline")),
    ("evaluator", ("simkit.evaluator",)),
    ("engine", ("simkit.engine",)),
    ("policies", ("simkit.policies",)),
    ("specs", ("simkit.specs",)),
    ("storage", ("simkit.storage",)),
    ("runner", ("simkit.runner", "simkit.replay")),
    ("analysis", ("simkit.analysis",)),
    ("studies", ("simkit.studies",)),
    ("learn", ("simkit.learn",)),
    ("tools", ("simkit.experiment", "simkit.bench", "simkit.warmup")),
    ("cli", ("simkit.cli", "simkit.cliargs", "simkit.__main__")),
)
LAZY_IMPORTS_ALLOWED = ("simkit.cli", "simkit.cliargs")  # lazy for speed; these imports dodge no cycle


def _module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def simkit_modules() -> dict[str, pathlib.Path]:
    """Dotted name -> file of every module of the package."""
    return {_module_name(p): p for p in sorted((ROOT / PACKAGE).rglob("*.py"))}


def experiment_scripts() -> dict[str, pathlib.Path]:
    return {f"experiments/{p.name}": p for p in sorted((ROOT / "experiments").glob("*.py"))}


def layer_of(module: str) -> int | None:
    """Index in :data:`LAYERS` of a simkit module (longest matching prefix), None if unplaced."""
    best, best_len = None, -1
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            exact_only = prefix == PACKAGE
            if module == prefix or (not exact_only and module.startswith(prefix + ".")):
                if len(prefix) > best_len:
                    best, best_len = index, len(prefix)
    return best


class _Import:
    def __init__(self, target: str, line: int, in_function: bool, names: tuple[tuple[str, str | None], ...]):
        self.target = target  # the module that runs (``from simkit.x import y``: simkit.x.y if a module)
        self.line = line
        self.in_function = in_function
        self.names = names  # (name, asname) of a ``from`` import; () for ``import``


def _is_package(module: str, modules: dict[str, pathlib.Path]) -> bool:
    return module in modules and modules[module].name == "__init__.py"


def _resolve_from(importer: str, node: ast.ImportFrom, modules: dict[str, pathlib.Path]) -> str | None:
    if node.level == 0:
        return node.module
    base = importer.split(".")
    if not _is_package(importer, modules):
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imports_of(name: str, path: pathlib.Path, modules: dict[str, pathlib.Path]) -> list[_Import]:
    """Every import of a simkit module in one file, with whether it sits inside a function."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[_Import] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inner = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.Import):
                for alias in child.names:
                    if alias.name == PACKAGE or alias.name.startswith(PACKAGE + "."):
                        found.append(_Import(alias.name, child.lineno, in_function, ()))
            elif isinstance(child, ast.ImportFrom):
                source = _resolve_from(name, child, modules)
                if source and (source == PACKAGE or source.startswith(PACKAGE + ".")):
                    for alias in child.names:
                        full = f"{source}.{alias.name}"
                        target = full if full in modules else source
                        found.append(_Import(target, child.lineno, in_function, ((alias.name, alias.asname),)))
            visit(child, inner)

    visit(tree, False)
    return found


def upward_imports() -> list[str]:
    """Imports whose target's layer is above the importer's."""
    modules = simkit_modules()
    out = []
    for name, path in modules.items():
        mine = layer_of(name)
        for imp in imports_of(name, path, modules):
            theirs = layer_of(imp.target)
            if mine is not None and theirs is not None and theirs > mine:
                out.append(f"{path.relative_to(ROOT)}:{imp.line}: {name} ({LAYERS[mine][0]}) imports "
                           f"{imp.target} ({LAYERS[theirs][0]})")
    return sorted(set(out))


def unplaced_modules() -> list[str]:
    return [name for name in simkit_modules() if layer_of(name) is None]


def function_level_imports() -> list[str]:
    modules = simkit_modules()
    out = []
    for name, path in {**modules, **experiment_scripts()}.items():
        if name in LAZY_IMPORTS_ALLOWED:
            continue
        for imp in imports_of(name, path, modules):
            if imp.in_function:
                out.append(f"{path.relative_to(ROOT)}:{imp.line}: imports {imp.target} inside a function")
    return sorted(set(out))


def _parents(module: str) -> list[str]:
    parts = module.split(".")
    return [".".join(parts[:k]) for k in range(1, len(parts))]


def import_cycles() -> list[list[str]]:
    """Cycles of the module-level import graph (strongly connected components of size > 1, or
    a module importing itself); an import runs the ``__init__`` of the target's packages too."""
    modules = simkit_modules()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        ancestors = set(_parents(name))
        for imp in imports_of(name, path, modules):
            if imp.in_function or imp.target not in modules:
                continue
            for target in _parents(imp.target) + [imp.target]:
                if target in modules and target not in ancestors and target != name:
                    graph[name].add(target)
    # Tarjan's strongly connected components
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    counter = [0]

    def strongconnect(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                strongconnect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            strongconnect(v)
    return cycles


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _dotted(node: ast.AST) -> list[str] | None:
    """``a.b.c`` as ["a", "b", "c"]; None for anything but names and attributes."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return parts[::-1]


def private_uses() -> list[str]:
    """Private names of a simkit module imported or read (``module._name``) by another module."""
    modules = simkit_modules()
    out = []
    for name, path in {**modules, **experiment_scripts()}.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        where = path.relative_to(ROOT)
        bound: dict[str, str] = {}  # local name -> simkit module it is bound to
        for imp in imports_of(name, path, modules):
            if not imp.names:
                continue
            for alias, asname in imp.names:
                if imp.target.endswith("." + alias) and imp.target in modules:  # a module
                    bound[asname or alias] = imp.target
                elif _is_private(alias) and imp.target != name:
                    out.append(f"{where}:{imp.line}: imports {imp.target}.{alias}")
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name == PACKAGE or alias.name.startswith(PACKAGE + "."):
                        if alias.asname:
                            bound[alias.asname] = alias.name
                        else:
                            bound[alias.name.split(".")[0]] = alias.name.split(".")[0]
        for node in ast.walk(tree):
            if not isinstance(node, ast.Attribute):
                continue
            parts = _dotted(node)
            if parts is None or parts[0] not in bound:
                continue
            module = bound[parts[0]]
            for k, attr in enumerate(parts[1:], start=1):
                if f"{module}.{attr}" in modules:
                    module = f"{module}.{attr}"
                    continue
                if _is_private(attr) and module != name:
                    out.append(f"{where}:{node.lineno}: reads {module}.{attr}")
                break
    return sorted(set(out))


STATISTICS = "simkit.analysis"
BOT_LAYERS = ("simkit.policies", "simkit.runner", "simkit.engine", "simkit.replay")


def statistics_bot_imports() -> list[str]:
    """Every path by which a statistics module (:data:`STATISTICS`) reaches a policy, runner or
    engine module (:data:`BOT_LAYERS`), directly or through the modules it imports (issue 53:
    the statistics layer knows no bot; policy labels arrive as data)."""
    modules = simkit_modules()
    graph = {name: sorted({imp.target for imp in imports_of(name, path, modules)}) for name, path in modules.items()}
    out = []
    for start in sorted(m for m in modules if m == STATISTICS or m.startswith(STATISTICS + ".")):
        seen = {start: [start]}
        queue = [start]
        while queue:
            here = queue.pop(0)
            for target in graph.get(here, []):
                if target in seen:
                    continue
                seen[target] = seen[here] + [target]
                if target.startswith(BOT_LAYERS):
                    out.append(" -> ".join(seen[target]))
                    continue
                queue.append(target)
    return out


# ---------------------------------------------------------------------------- the tests


def test_every_module_has_a_layer():
    assert unplaced_modules() == []


def test_imports_flow_one_way():
    assert upward_imports() == []


def test_engine_asks_no_policy():
    """The engine (and everything below it) never imports the policies or the runner."""
    modules = simkit_modules()
    engine = layer_of("simkit.engine")
    for name, path in modules.items():
        if layer_of(name) <= engine:
            for imp in imports_of(name, path, modules):
                assert not imp.target.startswith(("simkit.policies", "simkit.runner")), (name, imp.target)


def test_statistics_know_no_bot():
    """``simkit.analysis`` reaches no policy, runner or engine module, even through another."""
    assert statistics_bot_imports() == []


def test_no_function_level_imports():
    assert function_level_imports() == []


def test_no_import_cycles():
    assert import_cycles() == []


def test_private_means_private():
    assert private_uses() == []


def test_checks_catch_breaches(tmp_path, monkeypatch):
    """The checks see what they are meant to see (on a small fake package)."""
    pkg = tmp_path / PACKAGE
    (pkg / "engine").mkdir(parents=True)
    (pkg / "policies").mkdir()
    (tmp_path / "experiments").mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "engine" / "__init__.py").write_text("")
    (pkg / "policies" / "__init__.py").write_text("")
    (pkg / "engine" / "kernel.py").write_text(
        "from simkit.policies import builtin as B\n"
        "def _step():\n    pass\n"
        "def f():\n    from simkit.policies.builtin import act\n    return B._greedy(act)\n")
    (pkg / "policies" / "builtin.py").write_text(
        "import simkit.engine.kernel\nfrom simkit.engine.kernel import _step\n"
        "def _greedy(x):\n    return simkit.engine.kernel._step\n")
    (pkg / "oddity.py").write_text("")
    (pkg / "analysis").mkdir()
    (pkg / "storage").mkdir()
    (pkg / "analysis" / "__init__.py").write_text("")
    (pkg / "storage" / "__init__.py").write_text("")
    (pkg / "analysis" / "report.py").write_text("from simkit.storage.files import write\n")
    (pkg / "storage" / "files.py").write_text("from simkit.policies.builtin import act\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    assert statistics_bot_imports() == [
        "simkit.analysis.report -> simkit.storage.files -> simkit.policies.builtin"]
    assert unplaced_modules() == ["simkit.oddity"]
    assert [line.split(": ", 1)[1] for line in upward_imports()] == [
        "simkit.engine.kernel (engine) imports simkit.policies.builtin (policies)",
        "simkit.engine.kernel (engine) imports simkit.policies.builtin (policies)",
    ]
    assert function_level_imports() == ["simkit/engine/kernel.py:5: imports simkit.policies.builtin inside a function"]
    assert import_cycles() == [["simkit.engine.kernel", "simkit.policies.builtin"]]
    assert private_uses() == [
        "simkit/engine/kernel.py:6: reads simkit.policies.builtin._greedy",
        "simkit/policies/builtin.py:2: imports simkit.engine.kernel._step",
        "simkit/policies/builtin.py:4: reads simkit.engine.kernel._step",
    ]


if __name__ == "__main__":
    sections = (
        ("modules without a layer", unplaced_modules()),
        ("imports that go up", upward_imports()),
        ("function-level imports", function_level_imports()),
        ("import cycles", [" <-> ".join(c) for c in import_cycles()]),
        ("private names used from another module", private_uses()),
        ("statistics that reach a bot", statistics_bot_imports()),
    )
    for title, lines in sections:
        print(f"{title}: {len(lines)}")
        for line in lines:
            print("  " + line)
    sys.exit(1 if any(lines for _, lines in sections) else 0)

"""The shape of the import graph: no import cycles in the four packages, and the stated dependency direction.

The graph is grimp's (the library import-linter is built on), read from the source, not by importing it.
Every import that runs counts, at module level or inside a function: a function-local import that closed a
cycle would only hide it until that function ran. Imports under ``if TYPE_CHECKING:`` never run and do not
count: they exist so that a rule can name the Engine that runs it while the engine names its rules.
"""

from __future__ import annotations

import itertools
from copy import deepcopy

import pytest

grimp = pytest.importorskip("grimp", reason="the dev extra brings grimp (through import-linter)")

PACKAGES = ("odyssey_env", "odyssey_gen", "odyssey_agents", "odyssey_eval")

#: Cycles that a change under way removes, each with the reason; an entry that no longer matches fails
#: the test, so the list only shrinks.
KNOWN_CYCLES: dict[tuple[str, str], str] = {}


@pytest.fixture(scope="module")
def graph():
    return grimp.build_graph(*PACKAGES, exclude_type_checking_imports=True, cache_dir=None)


def _cycles(graph) -> dict[frozenset[str], list[str]]:
    """Every direct import A -> B from which B leads back to A, as the chain A -> B -> ... -> A."""
    found: dict[frozenset[str], list[str]] = {}
    for importer in sorted(graph.modules):
        for imported in sorted(graph.find_modules_directly_imported_by(importer)):
            back = graph.find_shortest_chain(importer=imported, imported=importer)
            if back is not None:
                chain = [importer, *back]
                found.setdefault(frozenset(chain), chain)
    return found


def _render(chain: list[str], graph) -> str:
    lines = []
    for a, b in itertools.pairwise(chain):
        details = graph.get_import_details(importer=a, imported=b)
        where = f"line {details[0]['line_number']}: {details[0]['line_contents']}" if details else ""
        lines.append(f"  {a} -> {b}   ({where})")
    return "\n".join(lines)


def test_no_import_cycles(graph):
    cycles = _cycles(graph)
    allowed = {frozenset(pair) for pair in KNOWN_CYCLES}
    unexpected = [chain for members, chain in cycles.items() if members not in allowed]
    assert not unexpected, "import cycles:\n" + "\n\n".join(_render(chain, graph) for chain in unexpected)
    stale = [pair for pair in KNOWN_CYCLES if frozenset(pair) not in cycles]
    assert not stale, f"no longer a cycle, remove from KNOWN_CYCLES: {stale}"


def test_cycle_check_can_fail(graph):
    """The check sees a cycle when there is one (an import added to a copy of the graph)."""
    copy = deepcopy(graph)
    copy.add_import(importer="odyssey_env.limits", imported="odyssey_env.game")
    assert any({"odyssey_env.limits", "odyssey_env.game"} <= members for members in _cycles(copy))


def test_env_package_imports_none_of_the_others(graph):
    """odyssey_env is the bottom layer (DESIGN.md): pip install odyssey-gym's env needs gymnasium only."""
    offenders = []
    for other in PACKAGES[1:]:
        for imp in graph.find_matching_direct_imports(import_expression=f"odyssey_env.** -> {other}.**"):
            offenders.append(f"{imp['importer']} -> {imp['imported']}")
    assert not offenders, offenders

"""Property tests: shard-matrix never raises and only points at added lines."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from rules.shard_matrix import ShardMatrix
from tests.rules.props_kit import knob_rule_properties, run_on_files

(test_texts_never_raise_and_point_at_added_lines,
 test_raw_patches_never_raise) = knob_rule_properties(ShardMatrix)


MATRIX = st.sampled_from([
    "jobs:", "  job:", "    strategy:", "      max-parallel: {v}", "      matrix:",
    "        part: [{v}, {w}]", "        include:", "          - runner: r{v}",
    "            part_id: {v}", "            part_size: {w}", "        python: [a, b]",
    "    with:", "      test-matrix: |", "        {{ include: [",
    "          {{ config: c, shard: {v}, num_shards: {w} }},", "        ]}}",
    "    parallelism: {v}", "      run: x --auto-partition-size {w}", "  &a [*a]", "      - |",
])
INTS = st.integers(-3, 12)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(MATRIX, INTS, INTS), max_size=20),
       st.lists(st.tuples(MATRIX, INTS, INTS), max_size=20), st.booleans())
def test_matrix_shapes(base: list[tuple[str, int, int]], head: list[tuple[str, int, int]],
                       patch_only: bool) -> None:
    def text(items: list[tuple[str, int, int]]) -> str:
        return "\n".join(t.format(v=v, w=w) for t, v, w in items) + "\n"
    files = [{"path": ".github/workflows/w.yml", "base": text(base), "head": text(head)}]
    run_on_files(ShardMatrix(), files, "", patch_only)

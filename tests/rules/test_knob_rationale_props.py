"""Property tests: knob-rationale never raises and only points at added lines."""

from __future__ import annotations

from rules.knob_rationale import KnobRationale
from tests.rules.props_kit import knob_rule_properties

(test_texts_never_raise_and_point_at_added_lines,
 test_raw_patches_never_raise) = knob_rule_properties(KnobRationale)

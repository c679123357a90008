"""YAML read line by line (hostile, partial or invalid YAML never raises): each line
with its key path, block scalars, and one scanned view per changed file."""

from rules.analysis.yamlscan.scanner import scan
from rules.analysis.yamlscan.views import (
    YamlView,
    base_side,
    base_view,
    fresh_view,
    is_yaml,
    view,
)
from rules.analysis.yamlscan.yaml_lines import (
    ITEM,
    BlockScalar,
    YamlLine,
    indent_of,
    split_key,
    strip_comment,
    unquote,
)

__all__ = [
    "ITEM", "BlockScalar", "YamlLine", "YamlView", "base_side", "base_view", "fresh_view",
    "indent_of", "is_yaml", "scan", "split_key", "strip_comment", "unquote", "view",
]

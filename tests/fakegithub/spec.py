"""The vendored OpenAPI subset, compiled into routable, validating operations.

Requests are validated strictly (that is the point of the fake: a client bug must not
pass silently). Responses are only checked leniently, on request, because GitHub's own
description disagrees with real traffic in known ways (see the vendored README).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema

DATA_DIR = Path(__file__).resolve().parent.parent / "data" / "github"
SPEC_PATH = DATA_DIR / "openapi" / "rest-api.subset.deref.json"

# Keys whose values are maps of *names* to schemas: a property may itself be called
# "nullable" or "enum", so these maps must not be mistaken for schema keywords.
_NAME_MAPS = ("properties", "patternProperties", "definitions")
_RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$")

def _is_rfc3339(value: object) -> bool:
    if not isinstance(value, str):
        return True
    if not _RFC3339.match(value):
        return False
    try:
        datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


# Only date-time is checked: jsonschema's other format checks need optional packages.
FORMAT_CHECKER = jsonschema.FormatChecker(formats=())
FORMAT_CHECKER.checks("date-time")(_is_rfc3339)


def to_json_schema(node: Any) -> Any:
    """Translate OpenAPI 3.0 `nullable` into JSON Schema (draft 4 has no such keyword).

    An `enum` must gain `None` too, or `nullable: true` + `enum` still rejects null
    (GitHub's check-run `conclusion` is exactly that case).
    """
    if isinstance(node, list):
        return [to_json_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _NAME_MAPS and isinstance(value, dict):
            out[key] = {name: to_json_schema(sub) for name, sub in value.items()}
        elif key != "nullable":
            out[key] = to_json_schema(value)
    if node.get("nullable") is True:
        if isinstance(out.get("type"), str):
            out["type"] = [out["type"], "null"]
            if "enum" in out and None not in out["enum"]:
                out["enum"] = [*out["enum"], None]
        elif "type" not in out:
            out = {"anyOf": [out, {"type": "null"}]}
    return out


@dataclass(frozen=True)
class Parameter:
    name: str
    location: str
    required: bool
    schema: Mapping[str, Any]


@dataclass(frozen=True)
class Operation:
    operation_id: str
    method: str
    path_template: str
    docs_url: str
    regex: re.Pattern[str]
    path_params: Mapping[str, Parameter]
    query_params: Mapping[str, Parameter]
    body_schema: Mapping[str, Any] | None
    body_required: bool
    responses: Mapping[str, Mapping[str, Any]] = field(repr=False)

    def match(self, path: str) -> dict[str, str] | None:
        found = self.regex.fullmatch(path)
        if found is None:
            return None
        return {name: value or "" for name, value in found.groupdict().items()}


def _path_regex(template: str, multi_segment: set[str]) -> re.Pattern[str]:
    pattern = ""
    for piece in re.split(r"(\{[^}]+\})", template):
        if piece.startswith("{"):
            name = piece[1:-1]
            if name in multi_segment:
                # `{path}` may be empty (the repository root) or span several segments.
                pattern = pattern.removesuffix("/") + f"(?:/(?P<{name}>.*))?"
            else:
                pattern += f"(?P<{name}>[^/]+)"
        else:
            pattern += re.escape(piece)
    return re.compile(pattern)


def _compile(method: str, template: str, raw: Mapping[str, Any]) -> Operation:
    params = [
        Parameter(p["name"], p["in"], bool(p.get("required")), to_json_schema(p.get("schema", {})))
        for p in raw.get("parameters", [])
    ]
    multi = {p["name"] for p in raw.get("parameters", []) if p.get("x-multi-segment")}
    body = raw.get("requestBody")
    body_schema = None
    if body is not None:
        body_schema = to_json_schema(body["content"]["application/json"]["schema"])
    responses = {
        status: {ctype: c.get("schema", {}) for ctype, c in (resp.get("content") or {}).items()}
        for status, resp in raw["responses"].items()
    }
    return Operation(
        operation_id=raw["operationId"],
        method=method.upper(),
        path_template=template,
        docs_url=raw.get("externalDocs", {}).get("url", "https://docs.github.com/rest"),
        regex=_path_regex(template, multi),
        path_params={p.name: p for p in params if p.location == "path"},
        query_params={p.name: p for p in params if p.location == "query"},
        body_schema=body_schema,
        body_required=bool(body and body.get("required")),
        responses=responses,
    )


@cache
def load_operations() -> tuple[Operation, ...]:
    return tuple(
        _compile(method, template, raw)
        for template, item in _document()["paths"].items()
        for method, raw in item.items()
        if method in {"get", "put", "post", "patch", "delete"}
    )


def find_operation(method: str, path: str) -> tuple[Operation | None, dict[str, str]]:
    for operation in load_operations():
        if operation.method == method.upper():
            params = operation.match(path)
            if params is not None:
                return operation, params
    return None, {}


def _schema_problems(instance: Any, schema: Mapping[str, Any], where: str) -> list[str]:
    validator = jsonschema.Draft4Validator(schema, format_checker=FORMAT_CHECKER)
    problems = []
    for error in sorted(validator.iter_errors(instance), key=lambda e: list(e.absolute_path)):
        location = "/".join(str(part) for part in error.absolute_path) or where
        problems.append(f"For '{location}', {_describe(error)}")
    return problems


def _describe(error: jsonschema.ValidationError) -> str:
    # GitHub's wording for size limits; jsonschema's default would echo the whole value.
    if error.validator == "maxItems":
        return (f"Only {error.validator_value} items are allowed; "
                f"{len(error.instance)} were supplied.")
    if error.validator == "maxLength":
        return (f"Only {error.validator_value} characters are allowed; "
                f"{len(error.instance)} were supplied.")
    message = str(error.message)
    return (message if len(message) <= 300 else message[:300] + "…") + "."


def _coerce(raw: str, schema: Mapping[str, Any]) -> Any:
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind]
    if "integer" in kinds and re.fullmatch(r"-?\d+", raw):
        return int(raw)
    if "boolean" in kinds and raw in {"true", "false"}:
        return raw == "true"
    if "oneOf" in schema and re.fullmatch(r"\d+", raw):
        return int(raw)
    return raw


def validate_path_params(operation: Operation, params: Mapping[str, str]) -> list[str]:
    problems: list[str] = []
    for name, value in params.items():
        spec = operation.path_params.get(name)
        if spec is not None:
            problems += _schema_problems(_coerce(value, spec.schema), spec.schema, name)
    return problems


def validate_query(
    operation: Operation, query: Iterable[tuple[str, str]]
) -> tuple[dict[str, Any], list[str]]:
    values: dict[str, Any] = {}
    problems: list[str] = []
    for name, raw in query:
        spec = operation.query_params.get(name)
        if spec is None:
            problems.append(f"Unknown query parameter '{name}' for {operation.operation_id}.")
            continue
        if name in values:
            problems.append(f"Query parameter '{name}' given more than once.")
        values[name] = _coerce(raw, spec.schema)
        problems += _schema_problems(values[name], spec.schema, name)
    for name, spec in operation.query_params.items():
        if spec.required and name not in values:
            problems.append(f"Missing required query parameter '{name}'.")
    return values, problems


def validate_body(operation: Operation, raw: bytes) -> tuple[Any, list[str]]:
    """Parse and validate a JSON request body; a ValueError means unparseable JSON."""
    if operation.body_schema is None:
        return None, []
    if not raw.strip():
        if operation.body_required:
            return None, ["Requires a JSON request body."]
        return {}, []
    body = json.loads(raw)
    return body, _schema_problems(body, operation.body_schema, "body")


def check_response(operation: Operation, status: int, body: Any) -> list[str]:
    """Lenient debug check of a JSON response against the documented schema."""
    schema = operation.responses.get(str(status), {}).get("application/json")
    if not schema:
        return []
    schema = to_json_schema(schema)
    # A file matches several `oneOf` branches of get-content; GitHub disambiguates by
    # `type` (the discriminator), so do the same.
    if "discriminator" in schema and isinstance(body, dict):
        for branch in schema["oneOf"]:
            if body.get("type") in branch.get("properties", {}).get("type", {}).get("enum", []):
                schema = branch
                break
    problems = _schema_problems(body, schema, "response")
    return [f"{operation.operation_id} {status}: {p}" for p in problems]


@cache
def _document() -> dict[str, Any]:
    return dict(json.loads(SPEC_PATH.read_text(encoding="utf-8")))


def response_example(operation_id: str, status: str = "200", name: str = "default") -> Any:
    """A fresh copy of one of GitHub's documented response examples (used as templates)."""
    for item in _document()["paths"].values():
        for raw in item.values():
            if isinstance(raw, dict) and raw.get("operationId") == operation_id:
                content = raw["responses"][status]["content"]["application/json"]
                return json.loads(json.dumps(content["examples"][name]["value"]))
    raise KeyError(operation_id)

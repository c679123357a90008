"""CI log forensics: the root-cause line of a failed job, its category and signature."""

from bot.evidence.extract import (
    LogLine,
    NoRootCause,
    Result,
    RootCause,
    extract_binary,
    extract_bytes,
    extract_file,
    extract_stream,
)
from bot.evidence.signature import normalize, signature

__all__ = [
    "LogLine",
    "NoRootCause",
    "Result",
    "RootCause",
    "extract_binary",
    "extract_bytes",
    "extract_file",
    "extract_stream",
    "normalize",
    "signature",
]

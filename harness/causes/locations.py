"""Where a target is installed is no part of what it did (issue 35): a target's label (`adapter:
<its command line>`, `ts:<checkout>`, `js:<module>`) and absolute paths are taken out of a
failure's message before it is classified, so that a cause's key, id and summary are the same
wherever the target lives and in every run."""

from __future__ import annotations

import re
from typing import Final

#: The label the adapter target puts before its messages (`adapter:<argv>: …`).
_LABEL: Final = re.compile(r"(?<![\w-])(?:adapter|ts|js):\S.*?: ")
#: An absolute path (at least two parts), wherever it stands.
_ABSOLUTE: Final = re.compile(r"(?<![\w:/.~-])/(?:[^\s/:'\"()]+/)+[^\s/:'\"()]*")
#: Said before a target's error when a probe check re-ran its reducer (harness/invariants/registry.py).
PROBE_RAISED: Final = "the reducer raised during the probe: "
#: The longest summary, cut at a word (a matrix row shows it whole).
SUMMARY_CHARS: Final = 120


def without_locations(message: str) -> str:
    """`message` without target labels and absolute paths (`<path>` stands for one)."""
    return _ABSOLUTE.sub("<path>", _LABEL.sub("", message))


def short(text: str, limit: int = SUMMARY_CHARS) -> str:
    """`text` cut at a word boundary to at most `limit` characters (an ellipsis says so)."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1].rsplit(" ", 1)[0].rstrip(" ,;:")
    return cut + "…"

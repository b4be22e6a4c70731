"""Escaping for `index.html`: text into HTML, data into an inline `<script>`."""

from __future__ import annotations

import json
from typing import Any

_E = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}


def esc(value: Any) -> str:
    return "".join(_E.get(ch, ch) for ch in str(value))


def embed(data: Any) -> str:
    """JSON safe inside a <script> element."""
    return (json.dumps(data, ensure_ascii=False, sort_keys=True)
            .replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026"))

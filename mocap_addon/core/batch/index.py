"""``index.html`` in the output folder: every take of a run with its contact sheet, status, duration,
joints and how many canonical joints it maps, to look through in a browser (no server, no scripts
beyond a name filter).  Names and messages come from files: all of it is escaped."""

from __future__ import annotations

import html
import os
from collections.abc import Sequence
from typing import Any
from urllib.parse import quote

from ..formats.textio import atomic_write
from ..naming import CANONICAL_JOINTS
from .plan import Job

INDEX_NAME = "index.html"

_STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #1a202c; background: #f7fafc; }
h1 { font-size: 20px; margin: 0 0 4px; }
.counts { color: #4a5568; margin-bottom: 12px; }
input { font: inherit; padding: 6px 10px; width: 320px; margin-bottom: 16px; }
.grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(340px, 1fr)); gap: 14px; }
.take { background: #fff; border: 1px solid #e2e8f0; border-radius: 6px; padding: 10px; }
.take img { width: 100%; height: 210px; object-fit: contain; display: block; }
.name { font-weight: 600; word-break: break-all; margin: 6px 0 2px; }
.facts { color: #4a5568; font-size: 13px; }
.status { display: inline-block; font-size: 12px; padding: 0 6px; border-radius: 3px; margin-right: 6px; }
.ok { background: #c6f6d5; } .skipped { background: #e2e8f0; } .error { background: #fed7d7; }
.message { font: 12px/1.4 ui-monospace, monospace; color: #9b2c2c; white-space: pre-wrap; word-break: break-all; }
.nothing { height: 210px; display: flex; align-items: center; justify-content: center; color: #a0aec0;
           background: #edf2f7; border-radius: 4px; }
"""

_FILTER = """
document.getElementById('filter').addEventListener('input', function () {
  var words = this.value.toLowerCase();
  document.querySelectorAll('.take').forEach(function (take) {
    take.style.display = take.dataset.name.indexOf(words) >= 0 ? '' : 'none';
  });
});
"""


def write_index(out_dir: str, takes: Sequence[tuple[Job, dict[str, Any]]], preview_of: Any) -> str:
    """Write ``out_dir/index.html`` for ``takes`` (each job with its report line); ``preview_of(job)`` is
    its contact sheet's path relative to ``out_dir``.  Returns the index's path."""
    counts = {status: sum(line["status"] == status for _, line in takes) for status in ("ok", "skipped", "error")}
    cards = [_card(job, line, preview_of(job), out_dir) for job, line in sorted(takes, key=lambda t: t[0].name)]
    page = "\n".join([
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        "<title>Motion library</title>", f"<style>{_STYLE}</style></head><body>",
        "<h1>Motion library</h1>",
        f'<div class="counts">{len(takes)} takes: {counts["ok"]} converted, {counts["skipped"]} up to date, '
        f'{counts["error"]} failed</div>',
        '<input id="filter" type="search" placeholder="filter by name">',
        '<div class="grid">', *cards, "</div>", f"<script>{_FILTER}</script>", "</body></html>", ""])
    path = os.path.join(out_dir, INDEX_NAME)
    atomic_write(path, page.encode("utf-8"))
    return path


def _card(job: Job, line: dict[str, Any], preview: str, out_dir: str) -> str:
    """One take: its picture (or why there is none), name, status and facts."""
    name = html.escape(job.name)
    status = line["status"]
    if os.path.isfile(os.path.join(out_dir, preview)) and status != "error":
        link = html.escape(quote(preview))
        picture = f'<a href="{link}"><img src="{link}" alt="{name}" loading="lazy"></a>'
    else:
        picture = '<div class="nothing">no preview</div>'
    facts = []
    if line.get("frames") is not None and line.get("fps"):
        facts.append(f'{line["frames"] / line["fps"]:.2f} s ({line["frames"]} frames at {line["fps"]:.6g} fps)')
    if line.get("joints") is not None:
        facts.append(f'{line["joints"]} joints')
    if line.get("mapped") is not None:
        facts.append(f'{line["mapped"]}/{len(CANONICAL_JOINTS)} canonical joints mapped')
    body = [f'<div class="facts">{html.escape(" · ".join(facts))}</div>']
    if status == "error":
        body.append(f'<div class="message">{html.escape(str(line.get("error")))}</div>')
    else:
        output = html.escape(quote(job.relative))
        body.append(f'<div class="facts">→ <a href="{output}">{html.escape(job.relative)}</a></div>')
    body += [f'<div class="facts">warning: {html.escape(str(w))}</div>' for w in line.get("warnings", [])]
    return (f'<div class="take" data-name="{html.escape(job.name.lower())}">{picture}'
            f'<div class="name">{name}</div><span class="status {status}">{status}</span>{"".join(body)}</div>')

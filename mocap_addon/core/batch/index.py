"""``index.html`` in the output folder: every take of a run, to look through in a browser (no server).

Each card plays its take as a small animation (the stick figure of the contact sheet, from the side),
drawn on a canvas from the take's ``.motion.js`` beside its contact sheet (:func:`.preview.motion_sidecar`:
int16 points), loaded only when the card comes into view (``IntersectionObserver``) and drawn only while it
is in view, so a library of thousands of takes opens at once; the contact sheet stays, as the still behind a
link.  Filters by name, status (converted, up to date, failed, with warnings), duration and joints, and
sorting; a take's warnings are folded behind a badge.  Names and messages come from files: all of it is
escaped."""

from __future__ import annotations

import html
import os
from collections.abc import Sequence
from typing import Any
from urllib.parse import quote

from ..formats.textio import atomic_write
from ..naming import CANONICAL_JOINTS
from .convert import motion_name
from .plan import Job

INDEX_NAME = "index.html"

_STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #1a202c; background: #f7fafc; }
h1 { font-size: 20px; margin: 0 0 4px; }
.counts { color: #4a5568; margin-bottom: 12px; }
.controls { display: flex; flex-wrap: wrap; gap: 10px 16px; align-items: center; margin-bottom: 16px; }
.controls input, .controls select { font: inherit; padding: 4px 8px; }
.controls input[type=number] { width: 72px; }
#filter { width: 260px; }
.grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(300px, 1fr)); gap: 14px; }
.take { background: #fff; border: 1px solid #e2e8f0; border-radius: 6px; padding: 10px; }
.take canvas, .take img, .nothing { width: 100%; height: 180px; display: block; }
.take img { object-fit: contain; }
.name { font-weight: 600; word-break: break-all; margin: 6px 0 2px; }
.facts { color: #4a5568; font-size: 13px; }
.status { display: inline-block; font-size: 12px; padding: 0 6px; border-radius: 3px; margin-right: 6px; }
.ok { background: #c6f6d5; } .skipped { background: #e2e8f0; } .error { background: #fed7d7; }
.message { font: 12px/1.4 ui-monospace, monospace; color: #9b2c2c; white-space: pre-wrap; word-break: break-all; }
.warnings { display: inline-block; font-size: 12px; }
.warnings summary { cursor: pointer; background: #fefcbf; border-radius: 3px; padding: 0 6px; list-style: none; }
.warnings[open] { display: block; }
.warnings div { font-size: 12px; color: #744210; margin-top: 4px; }
.nothing { display: flex; align-items: center; justify-content: center; color: #a0aec0; background: #edf2f7;
           border-radius: 4px; }
"""

_CONTROLS = """
<div class="controls">
<input id="filter" type="search" placeholder="filter by name">
<label>status <select id="status"><option value="">all</option><option value="ok">converted</option>
<option value="skipped">up to date</option><option value="error">failed</option>
<option value="warnings">with warnings</option></select></label>
<label>seconds <input id="min-seconds" type="number" min="0" step="any" placeholder="from">
<input id="max-seconds" type="number" min="0" step="any" placeholder="to"></label>
<label>joints <input id="min-joints" type="number" min="0" placeholder="from">
<input id="max-joints" type="number" min="0" placeholder="to"></label>
<label>sort <select id="sort"><option value="name">name</option><option value="-seconds">longest first</option>
<option value="seconds">shortest first</option><option value="-joints">most joints</option>
<option value="status">status</option></select></label>
<span id="shown"></span>
</div>
"""

# The page's script: filters and sorting over the cards' data attributes; each card's animation loaded as a
# script (file:// pages may not fetch) when it nears the view, drawn while in view, one frame loop for all.
_SCRIPT = """
(function () {
  var grid = document.querySelector('.grid');
  var cards = Array.prototype.slice.call(grid.querySelectorAll('.take'));
  var inView = new Set();
  var colours = {l: '#2b6cb0', r: '#c53030', c: '#4a5568'};
  function number(id) { var v = document.getElementById(id).value; return v === '' ? null : parseFloat(v); }
  function within(value, low, high) {
    return (low === null || value >= low) && (high === null || value <= high);
  }
  function apply() {
    var words = document.getElementById('filter').value.toLowerCase();
    var status = document.getElementById('status').value;
    var seconds = [number('min-seconds'), number('max-seconds')], joints = [number('min-joints'), number('max-joints')];
    var shown = 0;
    cards.forEach(function (card) {
      var d = card.dataset;
      var ok = d.name.indexOf(words) >= 0 && within(parseFloat(d.seconds), seconds[0], seconds[1]) &&
        within(parseFloat(d.joints), joints[0], joints[1]) &&
        (!status || (status === 'warnings' ? d.warnings !== '0' : d.status === status));
      card.hidden = !ok;
      shown += ok;
    });
    document.getElementById('shown').textContent = shown + ' shown';
  }
  function sort() {
    var key = document.getElementById('sort').value, down = key[0] === '-', field = key.replace('-', '');
    cards.sort(function (a, b) {
      var x = a.dataset[field], y = b.dataset[field];
      if (field === 'seconds' || field === 'joints') { x = parseFloat(x); y = parseFloat(y); }
      var order = x < y ? -1 : x > y ? 1 : 0;
      return (down ? -order : order) || (a.dataset.name < b.dataset.name ? -1 : 1);
    });
    cards.forEach(function (card) { grid.appendChild(card); });
  }
  ['filter', 'status', 'min-seconds', 'max-seconds', 'min-joints', 'max-joints'].forEach(function (id) {
    document.getElementById(id).addEventListener('input', apply);
  });
  document.getElementById('sort').addEventListener('change', sort);
  window.mocapMotion = function (script, motion) {
    var card = document.getElementById(script.dataset.card);
    var bytes = atob(motion.data), raw = new Uint8Array(bytes.length);
    for (var i = 0; i < bytes.length; i++) raw[i] = bytes.charCodeAt(i);
    motion.points = new Int16Array(raw.buffer);
    motion.started = performance.now();
    card.motion = motion;
    script.remove();
  };
  function load(card) {
    if (card.dataset.requested || !card.dataset.motion) return;
    card.dataset.requested = '1';
    var script = document.createElement('script');
    script.src = card.dataset.motion;
    script.dataset.card = card.id;
    document.head.appendChild(script);
  }
  function draw(card, now) {
    var m = card.motion, canvas = card.querySelector('canvas'), g = canvas.getContext('2d');
    var frame = m.fps > 0 ? Math.floor((now - m.started) / 1000 * m.fps) % m.frames : 0;
    if (card.dataset.frame === String(frame)) return;
    card.dataset.frame = frame;
    var width = canvas.width, height = canvas.height;
    var scale = 0.9 * Math.min(width / Math.max(2 * m.across, 1e-6), height / Math.max(m.tall, 1e-6)) / 32767;
    g.clearRect(0, 0, width, height);
    g.strokeStyle = '#a0aec0'; g.lineWidth = 1;
    g.beginPath(); g.moveTo(0, height - 6); g.lineTo(width, height - 6); g.stroke();
    g.lineWidth = 2; g.lineCap = 'round';
    var p = m.points, base = frame * m.segments * 4;
    for (var s = 0; s < m.segments; s++) {
      var k = base + 4 * s;
      g.strokeStyle = colours[m.sides[s]] || colours.c;
      g.beginPath();
      g.moveTo(width / 2 + p[k] * scale, height - 6 - p[k + 1] * scale);
      g.lineTo(width / 2 + p[k + 2] * scale, height - 6 - p[k + 3] * scale);
      g.stroke();
    }
  }
  function tick(now) {
    inView.forEach(function (card) { if (card.motion && !card.hidden) draw(card, now); });
    requestAnimationFrame(tick);
  }
  var watcher = new IntersectionObserver(function (entries) {
    entries.forEach(function (entry) {
      if (entry.isIntersecting) { inView.add(entry.target); load(entry.target); }
      else inView.delete(entry.target);
    });
  }, {rootMargin: '300px'});
  cards.forEach(function (card) { watcher.observe(card); });
  apply();
  requestAnimationFrame(tick);
})();
"""


def write_index(out_dir: str, takes: Sequence[tuple[Job, dict[str, Any]]], preview_of: Any) -> str:
    """Write ``out_dir/index.html`` for ``takes`` (each job with its report line); ``preview_of(job)`` is
    its contact sheet's path relative to ``out_dir`` (its animation beside it).  Returns the index's path."""
    counts = {status: sum(line["status"] == status for _, line in takes) for status in ("ok", "skipped", "error")}
    ordered = sorted(takes, key=lambda t: t[0].name)
    cards = [_card(number, job, line, preview_of(job), out_dir) for number, (job, line) in enumerate(ordered)]
    page = "\n".join([
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        "<title>Motion library</title>", f"<style>{_STYLE}</style></head><body>",
        "<h1>Motion library</h1>",
        f'<div class="counts">{len(takes)} takes: {counts["ok"]} converted, {counts["skipped"]} up to date, '
        f'{counts["error"]} failed</div>', _CONTROLS,
        '<div class="grid">', *cards, "</div>", f"<script>{_SCRIPT}</script>", "</body></html>", ""])
    path = os.path.join(out_dir, INDEX_NAME)
    atomic_write(path, page.encode("utf-8"))
    return path


def _card(number: int, job: Job, line: dict[str, Any], preview: str, out_dir: str) -> str:
    """One take: its animation (else its contact sheet, else why there is none), name, status, facts and
    warnings, with what the filters read as data attributes."""
    name = html.escape(job.name)
    status = line["status"]
    drawn = os.path.isfile(os.path.join(out_dir, preview)) and status != "error"
    motion = motion_name(preview)
    moving = drawn and os.path.isfile(os.path.join(out_dir, motion))
    link = html.escape(quote(preview))
    if moving:
        picture = (f'<canvas width="300" height="180" aria-label="{name}"></canvas>'
                   f'<div class="facts"><a href="{link}">contact sheet</a></div>')
    elif drawn:
        picture = f'<a href="{link}"><img src="{link}" alt="{name}" loading="lazy"></a>'
    else:
        picture = '<div class="nothing">no preview</div>'
    facts = []
    seconds = 0.0
    if line.get("frames") is not None and line.get("fps"):
        seconds = line["frames"] / line["fps"]
        facts.append(f'{seconds:.2f} s ({line["frames"]} frames at {line["fps"]:.6g} fps)')
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
    warnings = [str(w) for w in line.get("warnings", [])]
    badge = ""
    if warnings:
        listed = "".join(f"<div>{html.escape(w)}</div>" for w in warnings)
        badge = (f'<details class="warnings"><summary>{len(warnings)} warning{"s" * (len(warnings) > 1)}</summary>'
                 f"{listed}</details>")
    attributes = {"name": job.name.lower(), "status": status, "seconds": f"{seconds:.6g}",
                  "joints": str(line.get("joints") or 0), "warnings": str(len(warnings)),
                  "motion": quote(motion) if moving else ""}
    data = " ".join(f'data-{key}="{html.escape(value)}"' for key, value in attributes.items())
    return (f'<div class="take" id="take-{number}" {data}>{picture}<div class="name">{name}</div>'
            f'<span class="status {status}">{status}</span>{badge}{"".join(body)}</div>')

"""One self-contained HTML page of a sweep: the tables (from the Markdown of `tables.markdown`), the
plots embedded as base64 PNGs, the timing and the settings. It opens in any browser, offline, and
can be mailed as one file."""
from __future__ import annotations

import base64
import html
import json
from pathlib import Path
from typing import Mapping, Sequence

_STYLE = """
body { font-family: sans-serif; max-width: 1100px; margin: 2em auto; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; font-size: 0.9em; }
th, td { border: 1px solid #bbb; padding: 0.25em 0.6em; text-align: right; }
th:first-child, td:first-child { text-align: left; }
th { background: #eee; }
img { max-width: 100%; border: 1px solid #ddd; margin: 0.5em 0; }
pre { background: #f6f6f6; padding: 0.8em; overflow-x: auto; font-size: 0.85em; }
"""


def markdown_to_html(text: str) -> str:
    """The subset of Markdown that `tables.markdown` writes: headings, pipe tables, paragraphs."""
    out: list[str] = []
    table: list[list[str]] = []

    def flush() -> None:
        if not table:
            return
        header, *body = table
        out.append("<table><tr>" + "".join(f"<th>{html.escape(cell)}</th>" for cell in header) + "</tr>")
        for row in body:
            out.append("<tr>" + "".join(f"<td>{html.escape(cell)}</td>" for cell in row) + "</tr>")
        out.append("</table>")
        table.clear()

    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("|"):
            cells = [cell.strip() for cell in stripped.strip("|").split("|")]
            if not all(set(cell) <= {"-", ":"} and cell for cell in cells):
                table.append(cells)
            continue
        flush()
        if stripped.startswith("## "):
            out.append(f"<h2>{html.escape(stripped[3:])}</h2>")
        elif stripped.startswith("# "):
            out.append(f"<h1>{html.escape(stripped[2:])}</h1>")
        elif stripped:
            out.append(f"<p>{html.escape(stripped)}</p>")
    flush()
    return "\n".join(out)


def write_report(path: Path, title: str, tables_markdown: str, plots: Mapping[str, Path], timing: Mapping,
                 settings: Mapping, notes: Sequence[str] = ()) -> Path:
    parts = [f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>",
             f"<style>{_STYLE}</style></head><body>"]
    parts += [f"<p>{html.escape(note)}</p>" for note in notes]
    parts.append(markdown_to_html(tables_markdown))
    parts.append("<h2>Figures</h2>")
    for caption, image in plots.items():
        encoded = base64.b64encode(Path(image).read_bytes()).decode("ascii")
        parts.append(f"<h3>{html.escape(caption)}</h3><img alt='{html.escape(caption)}' "
                     f"src='data:image/png;base64,{encoded}'>")
    parts.append("<h2>Timing</h2><pre>" + html.escape(json.dumps(timing, indent=2)) + "</pre>")
    parts.append("<h2>Settings</h2><pre>" + html.escape(json.dumps(settings, indent=2, default=str)) + "</pre>")
    parts.append("</body></html>")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(parts))
    return path

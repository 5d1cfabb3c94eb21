"""Refusing a PDF whose text-less pages would be too large to render: time and peak memory.

The file is 20 blank pages of 14,400 × 14,400 pt (200 × 200 inches, about 1 kB in all), the
largest page size PDF allows without a user unit. Rendering one at 144 dpi would need a bitmap of
28,800 × 28,800 pixels (3.3 GB at 4 bytes a pixel). Each case runs in a fresh Python process, so
the peak resident memory (ru_maxrss) is the read's own, and is printed beside the same process's
peak after the imports alone:
- with a vision model configured: refused by the pixel budget, from the page sizes, before any
  page is rendered;
- with none: refused because nothing would read the pages, before anything is measured or rendered.

	python benchmarks/intake_limits.py [--pages 20] [--size 14400]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

CHILD = r"""
import io, json, resource, sys, time
import pypdf
from noviz_agent.intake.files import IntakeError
from noviz_agent.intake.proposal import read_document
from noviz_agent.testing import ScriptedModel

pages, size, with_vision = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3] == "1"
writer = pypdf.PdfWriter()
for _ in range(pages):
    writer.add_blank_page(width=size, height=size)
out = io.BytesIO(); writer.write(out); pdf = out.getvalue()
import pypdfium2, pdfplumber  # imported before the baseline, like on a warm worker
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
started = time.perf_counter()
try:
    read_document(pdf, "oversized.pdf", vision_model=ScriptedModel([]) if with_vision else None)
    message = "NOT refused"
except IntakeError as exc:
    message = str(exc)
seconds = time.perf_counter() - started
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"bytes": len(pdf), "seconds": seconds, "before_kb": before, "after_kb": after, "message": message}))
"""


def run(pages: int, size: float, with_vision: bool) -> dict:
	done = subprocess.run(
		[sys.executable, "-c", CHILD, str(pages), str(size), "1" if with_vision else "0"],
		capture_output=True,
		text=True,
		check=True,
	)
	return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
	parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
	parser.add_argument("--pages", type=int, default=20)
	parser.add_argument("--size", type=float, default=14400.0, help="page width and height in points")
	args = parser.parse_args()
	bitmap = (args.size * 2) ** 2 * 4
	print(
		f"{args.pages} text-less pages of {args.size:,.0f} × {args.size:,.0f} pt; rendering one at 144 dpi would need "
		f"a {args.size * 2:,.0f} × {args.size * 2:,.0f} pixel bitmap ({bitmap / 1e9:.1f} GB)"
	)
	for with_vision, case in ((True, "vision model configured"), (False, "no vision model")):
		r = run(args.pages, args.size, with_vision)
		print(
			f"{case}: refused in {r['seconds'] * 1000:.0f} ms, file {r['bytes']:,} bytes; peak resident memory "
			f"{r['after_kb'] / 1024:.0f} MB (after the imports alone: {r['before_kb'] / 1024:.0f} MB, "
			f"so +{(r['after_kb'] - r['before_kb']) / 1024:.1f} MB for the read)"
		)
		print(f"    message: {r['message']}")


if __name__ == "__main__":
	main()

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""annot_html.py PAGE.html PLOT MIN_MARKS - profctl trace --format html of a
program with annotations, in headless Chromium over the DevTools pipe:
  - no exception
  - a lane "plot PLOT" draws its points as one line, and hovering it names the
    plot and a value
  - the threads' lanes hold MIN_MARKS message marks or more, and hovering one
    says its text
  - hovering a call of an_work says its value
Exit 0 pass, 1 fail, 77 skip (no chromium)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from profctl_html import browse  # noqa: E402


def check(c, plot, min_marks, fails):
    js = c.js
    lane = """[...document.querySelectorAll('.tl-track')].find(t =>
        t.querySelector('.tl-label').textContent === %r)""" % ("plot " + plot)
    pts = js("""(() => { const t = %s; if (!t) return -1;
        const l = t.querySelector('polyline'); return l ? l.getAttribute('points').split(' ').length : 0; })()""" % lane)
    if pts < 2:
        fails.append("plot %s's lane draws %s points, want 2 or more" % (plot, pts))
    else:
        box = js("""(() => { const r = (%s).querySelector('svg').getBoundingClientRect();
            return [r.x + r.width / 2, r.y + 20]; })()""" % lane)
        tip = c.hover(box[0], box[1])
        if not tip.startswith(plot + " = "):
            fails.append("hovering the plot says %r" % tip)
    marks = js("document.querySelectorAll('.tl-mark').length")
    if marks < min_marks:
        fails.append("%d message marks, want %d or more" % (marks, min_marks))
    elif js("""(() => { const m = document.querySelector('.tl-mark');
             const r = m.getBoundingClientRect(); return r.width > 0 && r.height > 0; })()"""):
        box = js("""(() => { const r = document.querySelector('.tl-mark').getBoundingClientRect();
            return [r.x + 1, r.y + 2]; })()""")
        tip = c.hover(box[0], box[1])
        if not tip.startswith("tick "):
            fails.append("hovering a mark says %r" % tip)
    # a call whose middle no message mark covers
    box = js("""(() => { for (const b of document.querySelectorAll('.tl-bar')) {
        const r = b.getBoundingClientRect(), x = r.x + r.width / 2, y = r.y + 4;
        if (b.dataset.name === 'an_work' && r.width >= 1 && x < innerWidth && y < innerHeight &&
            document.elementFromPoint(x, y) === b) return [x, y]; } return null; })()""")
    if not box:
        fails.append("no an_work call drawn")
    else:
        tip = c.hover(box[0], box[1])
        if "value " not in tip:
            fails.append("hovering an_work says %r, want its value" % tip)


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    page, plot, min_marks = os.path.abspath(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    return browse("annot_html", "file://" + page, 1280, 900,
                  lambda c, fails: check(c, plot, min_marks, fails))


if __name__ == "__main__":
    sys.exit(main())

"""sonde report --html opened in headless Chromium.

split burns CPU in hot_fn, warm_fn and cool_fn at 60/30/10; the page
must show that in every view, react to clicks and to a time selection,
and log no errors.  Screenshots of each view land in the test's tmp dir
(printed) and, when SONDE_ARTIFACTS names a directory, there too (pytest
keeps only its last few tmp dirs); SONDE_DOCS_SCREENSHOT=1 refreshes
docs/report.png.
"""
import json
import os
import re
import shutil
from subprocess import run

import pytest

from cdp import Browser, chromium_path
from itest import TOP, sonde, workload

pytestmark = pytest.mark.skipif(not chromium_path(), reason="needs chromium (scripts/install-deps)")


def page_data(path):
    text = open(path, encoding="utf-8").read()
    m = re.search(r'<script type="application/json" id="sonde-data">(.*?)</script>', text, re.S)
    return text, json.loads(m.group(1))


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    d = tmp_path_factory.mktemp("html")
    data, html = d / "split.data", d / "split.html"
    sonde("record", "-g", "-F", "2000", "-o", str(data), "--", workload("split"), "1")
    r = sonde("report", "-i", str(data), "--html", str(html))
    assert "wrote" in r.stderr
    return {"dir": d, "data": data, "html": html}


@pytest.fixture(scope="module")
def browser(report):
    with Browser() as b:
        b.open(report["html"])
        b.wait_for("window.sonde && window.sonde.ready")
        yield b


def shot(b, report, name):
    path = report["dir"] / f"view-{name}.png"
    b.screenshot(str(path))
    print("screenshot:", path)
    keep = os.environ.get("SONDE_ARTIFACTS")
    if keep:
        os.makedirs(keep, exist_ok=True)
        shutil.copy(path, os.path.join(keep, path.name))
    return path


def func_id(b, name):
    f = b.eval(f"sonde.funcByName({json.dumps(name)})")
    assert f >= 0, name
    return f


def test_file_is_self_contained(report):
    text, d = page_data(report["html"])
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", text), "fetches from a network"
    assert "fetch(" not in text and "XMLHttpRequest" not in text
    assert d["events"][0]["name"] == "cpu-clock" and d["samples"] > 300
    # The functions table holds the text report's numbers.
    j = json.loads(sonde("report", "-i", str(report["data"]), "--json", "--sort", "dso,sym",
                         "--call-graph", "none").stdout)
    mine = {d["funcs"]["name"][r["func"]]: r["self"][0] for r in d["functions"]}
    theirs = {e["symbol"]: e["self"][0]["samples"] for e in j["entries"]}
    for fn in ("hot_fn", "warm_fn", "cool_fn"):
        assert mine[fn] == theirs[fn], fn


def test_loads_without_errors(browser, report):
    assert browser.console_errors == []
    hdr = browser.eval("document.getElementById('hdr').innerText")
    assert "split" in hdr and "cpu-clock" in hdr and "Kernel" in hdr and "Duration" in hdr
    for v in ("functions", "tree", "flame", "timeline", "code"):
        browser.eval(f"sonde.show('{v}')")
        shot(browser, report, v)
    browser.eval("sonde.show('functions')")
    assert browser.console_errors == []


def test_hot_fn_first_in_functions_table(browser):
    browser.eval("sonde.show('functions')")
    names = browser.eval("""Array.from(document.querySelectorAll('#fn-table tbody tr'))
        .slice(0, 3).map(tr => tr.querySelector('td.name').innerText)""")
    assert names[0].endswith("hot_fn"), names
    assert [n.split()[-1] for n in names] == ["hot_fn", "warm_fn", "cool_fn"], names


def test_hot_fn_widest_in_flame_graph(browser, report):
    browser.eval("sonde.show('flame')")
    rects = browser.eval("sonde.flameRects()")
    width = browser.eval("document.getElementById('flame').clientWidth")
    # Among the functions where time is spent (self samples), hot_fn is widest.
    spent = [r for r in rects if browser.eval(f"sonde.funcSelf(sonde.funcByName({json.dumps(r['name'])}))") > 0]
    widest = max(spent, key=lambda r: r["w"])
    assert widest["name"] == "hot_fn", widest
    assert 0.45 < widest["w"] / width < 0.75, widest
    # A click on it zooms: it then spans the whole width.
    y = browser.eval("document.getElementById('flame').getBoundingClientRect().top")
    x0 = browser.eval("document.getElementById('flame').getBoundingClientRect().left")
    browser.click(x0 + widest["x"] + widest["w"] / 2, y + widest["y"] + 8)
    zoomed = [r for r in browser.eval("sonde.flameRects()") if r["name"] == "hot_fn"]
    assert zoomed and zoomed[0]["w"] >= width - 2, zoomed
    browser.eval("document.getElementById('flame-search').value = 'warm'; "
                 "document.getElementById('flame-search').dispatchEvent(new Event('input'))")
    browser.eval("sonde.flameZoom(0)")
    assert "matched" in browser.eval("document.getElementById('flame-match').innerText")
    shot(browser, report, "flame-search")
    browser.eval("document.getElementById('flame-search').value = ''; "
                 "document.getElementById('flame-search').dispatchEvent(new Event('input'))")


def test_click_shows_callers_and_hot_line(browser, report):
    browser.eval("sonde.show('functions')")
    hot = func_id(browser, "hot_fn")
    browser.click_selector(f'#fn-table tr[data-f="{hot}"] td.name')
    assert browser.eval("sonde.state.selFunc") == hot
    callers = browser.eval("document.querySelector('#fn-detail .callers').innerText")
    # hot_fn's caller as the trie has it (main, or libc's caller when main
    # was called without a frame of its own).
    parent = browser.eval(f"""(() => {{ const d = sonde.data, n = sonde.nodesOf({hot})[0];
        return d.funcs.name[d.nodes.func[d.nodes.parent[n]]]; }})()""")
    assert parent in ("main", "__libc_start_call_main"), parent
    assert parent in callers, callers
    line = browser.eval("document.querySelector('#fn-detail .hotline').innerText")
    src = browser.eval("document.querySelector('#fn-detail .src').innerText")
    assert "split.c:" in line and "WORK(6)" in src, (line, src)
    p = shot(browser, report, "functions-selected")
    if os.environ.get("SONDE_DOCS_SCREENSHOT") or not os.path.exists(os.path.join(TOP, "docs", "report.png")):
        shutil.copy(p, os.path.join(TOP, "docs", "report.png"))
    # The Code view opens on the same function with its hot line marked.
    browser.click_selector('#fn-detail a[data-code]')
    hot_row = browser.eval("document.querySelector('#code-body tr.hot').innerText")
    assert "WORK(6)" in hot_row, hot_row
    # Instructions from sonde annotate's model: disassembly with the samples.
    assert browser.eval("sonde.data.code.provider") == "annotate"
    insns = browser.eval("document.querySelectorAll('#code-body table.code-src')[1].innerText")
    assert re.search(r"\b(add|imul|sub|mov)", insns), insns[:500]
    shot(browser, report, "code-hot_fn")


def test_call_trees(browser):
    browser.eval("sonde.show('tree')")
    text = browser.eval("document.getElementById('tree').innerText")
    assert "hot_fn" in text and "warm_fn" in text
    browser.eval("document.querySelector('input[name=tree-mode][value=up]').click()")
    rows = browser.eval("""Array.from(document.querySelectorAll('#tree .trow[data-key]'))
        .map(r => r.innerText)""")
    assert "hot_fn" in rows[0], rows[:3]  # bottom-up: hottest self first, opened to its callers
    browser.eval("document.querySelector('input[name=tree-mode][value=down]').click()")


def test_time_selection_changes_counts(browser, report):
    hot = func_id(browser, "hot_fn")
    full = browser.eval(f"sonde.funcSelf({hot})")
    browser.eval("sonde.show('timeline')")
    r = browser.eval("(() => { const r = document.getElementById('timeline').getBoundingClientRect();"
                     " return [r.left, r.top, r.width]; })()")
    left, top, width = r
    plot0 = left + 190  # the rows' labels come first
    browser.drag(plot0 + 0.1 * (width - 190), top + 22 + 13, plot0 + 0.4 * (width - 190))
    rng = browser.eval("sonde.state.range")
    assert rng and rng[0] > 0, rng
    part = browser.eval(f"sonde.funcSelf({hot})")
    assert 0 < part < full, (part, full)
    assert "Range" in browser.eval("document.getElementById('range').innerText")
    shot(browser, report, "timeline-selected")
    browser.eval("sonde.show('functions')")
    row = browser.eval(f"""document.querySelector('#fn-table tr[data-f="{hot}"]').children[3].innerText""")
    assert int(row) == part, (row, part)
    assert "in the selected range" in browser.eval("document.getElementById('fn-count').innerText")
    browser.eval("document.getElementById('range-clear').click()")
    assert browser.eval("sonde.state.range") is None
    assert browser.eval(f"sonde.funcSelf({hot})") == full
    assert browser.console_errors == []


def test_tracepoint_marks(tmp_path):
    data, html = tmp_path / "tp.data", tmp_path / "tp.html"
    sonde("record", "-F", "2000", "-e", "cpu-clock,sched:sched_switch", "-o", str(data), "--",
          "sh", "-c", f"{workload('split')} 0.2; sleep 0.05; {workload('split')} 0.2")
    sonde("report", "-i", str(data), "--html", str(html))
    _, d = page_data(html)
    assert d["timeline"]["marks"], "no tracepoint marks"
    with Browser() as b:
        b.open(html)
        b.wait_for("window.sonde && window.sonde.ready")
        assert b.eval("sonde.timelineRows()") is None
        b.eval("sonde.show('timeline')")
        # One marks row per tracepoint, with a mark for each of its samples
        # (perf script counts them in the same file).
        switches = sum(1 for l in run(["perf", "script", "-i", str(data), "-F", "event"],
                                      capture_output=True, text=True, check=True)
                       .stdout.splitlines() if l.strip().rstrip(":") == "sched:sched_switch")
        rows = [r for r in b.eval("sonde.timelineRows()") if r["kind"] == "marks"]
        assert switches > 0
        assert rows == [{"label": "\u2691 sched:sched_switch", "kind": "marks", "marks": switches}]
        shot(b, {"dir": tmp_path}, "timeline-marks")
        assert b.console_errors == []

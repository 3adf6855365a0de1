"""Browser tests of sonde report --html: headless Chromium over the
DevTools protocol (cdp.py), on real captures of tests/workloads/split.
The integration tests' helpers (build dir, running sonde) are loaded as
module `itest`."""
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
_spec = importlib.util.spec_from_file_location(
    "itest", os.path.join(HERE, "..", "integration", "conftest.py"))
itest = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(itest)
sys.modules["itest"] = itest

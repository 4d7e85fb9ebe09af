"""The project's pytest plugin loads in every pytest process, the cocotb run of each core test too (cocotb 2
starts pytest's assertion rewriting, which loads the entry points): it must import nothing heavy."""

import subprocess
import sys


def test_loading_the_plugin_imports_neither_the_sim_nor_litex():
    probe = ("import sys, monet.pytest_plugin\n"
             "print(' '.join(sorted(m for m in sys.modules if m.split('.')[0] in ('litex', 'migen', 'numpy')\n"
             "                      or m.startswith('monet.sim'))))")
    heavy = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.split()
    assert heavy == [], f"the pytest plugin imports {heavy[:5]}: a second a pytest process (one a core test)"

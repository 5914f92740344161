"""In a notebook: a real Jupyter kernel runs cells with ``%load_ext oomtriage``; an OOM in a cell keeps
its own traceback and the report appears under it, as HTML."""

from __future__ import annotations

import pytest

from conftest import ROOT

pytestmark = pytest.mark.slow


def test_an_oom_in_a_cell_shows_the_report_inline(tmp_path, monkeypatch):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    monkeypatch.setenv("OOMTRIAGE_REPORT_DIR", str(tmp_path / "reports"))
    notebook = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("%load_ext oomtriage"),
        nbformat.v4.new_code_cell("class OutOfMemoryError(RuntimeError): pass\n"
                                  "raise OutOfMemoryError('CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total "
                                  "capacity of 8.00 GiB of which 0 bytes is free. Of the allocated memory 7.10 GiB is allocated "
                                  "by PyTorch, and 120.00 MiB is reserved by PyTorch but unallocated.')"),
        nbformat.v4.new_code_cell("print('the kernel is still alive')"),
    ])
    client = nbclient.NotebookClient(notebook, timeout=120, allow_errors=True, resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    outputs = notebook.cells[1].outputs
    kinds = [output["output_type"] for output in outputs]
    assert "error" in kinds and outputs[kinds.index("error")]["ename"] == "OutOfMemoryError"  # its own error first
    html = [output["data"]["text/html"] for output in outputs if output["output_type"] == "display_data"]
    assert len(html) == 1 and 'class="oomtriage-report"' in html[0] and "Likely causes" in html[0]
    assert kinds.index("error") < kinds.index("display_data")
    assert notebook.cells[2].outputs[0]["text"] == "the kernel is still alive\n"
    assert list((tmp_path / "reports").glob("oom-*/report.json"))


def test_a_report_object_displays_as_html():
    from IPython.core.formatters import DisplayFormatter

    from oomtriage.api import analyze_inputs

    report = analyze_inputs([ROOT / "tests" / "fixtures" / "logs" / "pytorch_c_reserved.log"])
    data, _ = DisplayFormatter().format(report)
    assert 'class="oomtriage-report"' in data["text/html"]

"""The summaries layer: claims and plots read the same statistics, and no numeric check pulls in
plotting."""

import subprocess
import sys

import pytest

from .conftest import REPO

CLAIMS = ["comparison", "coreset", "fedkmeans", "kfed", "localkmeans"]


@pytest.mark.parametrize("module", [*(f"fedclust.papers.{m}.claims" for m in CLAIMS),
                                    "fedclust.papers.comparison.summaries",
                                    "fedclust.papers.coreset.summaries",
                                    "fedclust.papers.fedkmeans.summaries",
                                    "fedclust.reproduction"])
def test_no_claim_or_summary_imports_matplotlib(module):
    code = (f"import sys, {module}; "
            f"print(sorted(m for m in sys.modules if m.split('.')[0] == 'matplotlib'))")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                         text=True, check=True)
    assert out.stdout.strip() == "[]", f"{module} imports {out.stdout.strip()}"


def test_the_plot_and_the_claim_read_the_same_statistics():
    """One home: the plotting modules use the summaries' functions, not copies of them."""
    from fedclust.papers.comparison import figures as comparison_plots
    from fedclust.papers.comparison import summaries as comparison
    from fedclust.papers.coreset import figures as coreset_plots
    from fedclust.papers.coreset import summaries as coreset
    from fedclust.papers.fedkmeans import figures as fedkmeans_plots
    from fedclust.papers.fedkmeans import summaries as fedkmeans

    assert comparison_plots.comparison_stats is comparison.comparison_stats
    assert comparison_plots.label_of is comparison.label_of
    assert coreset_plots.curve_stats is coreset.curve_stats
    assert fedkmeans_plots.sweep_stats is fedkmeans.sweep_stats
    assert fedkmeans_plots.real_stats is fedkmeans.real_stats

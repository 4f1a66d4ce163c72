import pandas as pd
import pytest

from fedclust.pipeline.benchmarks import read_benchmarks, render_summary, summarize

HEADER = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"


def write_benchmark(root, relative, seconds, rss, cpu):
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(HEADER + f"{seconds}\t0:00:00\t{rss}\t1\t1\t1\t0\t0\t50.0\t{cpu}\n")


def test_jobs_summed_per_rule_with_their_peaks(tmp_path):
    write_benchmark(tmp_path, "lkm_real/localkmeans/real/mnist.tsv", 120.5, 900.0, 230.0)
    write_benchmark(tmp_path, "lkm_real/localkmeans/real/postures.tsv", 30.0, 1500.0, 55.0)
    write_benchmark(tmp_path, "figure/kfed/figure_fig1.tsv", 2.0, "-", 1.5)
    jobs = read_benchmarks(tmp_path)
    assert sorted(jobs["job"]) == ["kfed/figure_fig1", "localkmeans/real/mnist",
                                   "localkmeans/real/postures"]
    summary = summarize(jobs)
    assert summary["rule"].tolist() == ["lkm_real", "figure"]  # longest first
    real = summary.iloc[0]
    assert (real.jobs, real.total_seconds, real.longest_seconds) == (2, 150.5, 120.5)
    assert real.longest_job == "localkmeans/real/mnist"
    assert (real.cpu_seconds, real.peak_rss_mb) == (285.0, 1500.0)
    assert pd.isna(summary.iloc[1].peak_rss_mb)  # "-": not measured, not zero
    text = render_summary(summary, "quick")
    assert "3 jobs, 2.5 min of job time" in text and "1,500 MB" in text
    assert "| figure | 1 | 2.0 | 2.0 | kfed/figure_fig1 | 1.5 | n/a |" in text


def test_a_file_that_is_not_a_benchmark_is_named(tmp_path):
    (tmp_path / "gather").mkdir()
    (tmp_path / "gather" / "odd.tsv").write_text("a\tb\n1\t2\n")
    with pytest.raises(ValueError, match=r"gather/odd.tsv: not a Snakemake benchmark file"):
        read_benchmarks(tmp_path)


def test_no_benchmarks_gives_an_empty_summary(tmp_path):
    summary = summarize(read_benchmarks(tmp_path))
    assert summary.empty and "total_seconds" in summary.columns
